package dev.streamproof.client;

import com.fasterxml.jackson.core.type.TypeReference;
import io.a2a.client.Client;
import io.a2a.client.config.ClientConfig;
import io.a2a.client.transport.jsonrpc.JSONRPCTransport;
import io.a2a.client.transport.jsonrpc.JSONRPCTransportConfig;
import io.a2a.spec.AgentCard;
import io.a2a.spec.Message;
import io.a2a.spec.MessageSendParams;
import io.a2a.spec.SendStreamingMessageRequest;
import io.a2a.spec.StreamingEventKind;
import io.a2a.spec.TextPart;
import io.a2a.util.Utils;
import java.util.List;

/**
 * Loads the classes of a call before its clock starts. The client's time limits count from its
 * first request (the agent card), but the JVM's first card parse and first event parse cost
 * about a second of class loading; done here, inside the target's startup grace, that second
 * no longer falls between the card and the message.
 */
final class WarmUp {
    private static final String CARD = """
            {"name":"warm-up","description":"warm-up","url":"http://127.0.0.1:9/","version":"0",
             "protocolVersion":"0.3.0","preferredTransport":"JSONRPC",
             "capabilities":{"streaming":true},"defaultInputModes":["text/plain"],
             "defaultOutputModes":["text/plain"],"skills":[]}""";
    private static final String[] EVENTS = {
        """
        {"kind":"task","id":"t","contextId":"c","status":{"state":"submitted"},
         "artifacts":[{"artifactId":"a","name":"a.json","parts":[{"kind":"text","text":"x"}]}]}""",
        """
        {"kind":"status-update","taskId":"t","contextId":"c","final":true,
         "status":{"state":"completed","message":{"kind":"message","role":"agent","messageId":"m",
         "parts":[{"kind":"text","text":"x"}]}}}""",
        """
        {"kind":"artifact-update","taskId":"t","contextId":"c","append":true,"lastChunk":true,
         "artifact":{"artifactId":"a","parts":[{"kind":"text","text":"x"}]}}""",
    };

    private WarmUp() {}

    static void run() {
        try {
            AgentCard card = Utils.unmarshalFrom(CARD, new TypeReference<AgentCard>() {});
            for (String event : EVENTS) {
                Utils.OBJECT_MAPPER.readValue(event, StreamingEventKind.class);
            }
            Message message = new Message.Builder()
                    .role(Message.Role.USER)
                    .parts(List.of(new TextPart("x")))
                    .messageId("m")
                    .build();
            Utils.toJsonString(new SendStreamingMessageRequest.Builder()
                    .jsonrpc("2.0")
                    .method(SendStreamingMessageRequest.METHOD)
                    .params(new MessageSendParams.Builder().message(message).build())
                    .build());
            Client.builder(card)
                    .clientConfig(new ClientConfig.Builder().build())
                    .withTransport(JSONRPCTransport.class, new JSONRPCTransportConfig())
                    .build()
                    .close();
        } catch (Exception | LinkageError e) {
            Main.log("warm-up skipped: " + StreamCall.describe(e));
        }
    }
}
