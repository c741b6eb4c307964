"""Gateway profiles: the wires a gateway may speak, and how the seed's rules read on each.

A profile is one module (:mod:`.typed_frames`, :mod:`.adk_events`, :mod:`.ag_ui`,
:mod:`.ai_sdk_ui`): the request a chat turn sends on that wire, how its stream reads as the
seed's typed frames (the *seed view* the shared checks judge), what the user's screen shows
after each event, and for every requirement what it means there, how it is judged, or why it
is not applicable. :mod:`.registry` picks the profile of an observation and judges it
(:func:`~streamproof.suites.gateway.profiles.registry.check_gateway`); :mod:`.wire` holds the
target-side settings (profile names, the frame-name mapping, the disconnect policy).
"""
