"""The browser-client suite's references: a page and a reducer module of the seed's client
rules, with their mutants (docs/explanation/mutants.md)."""
