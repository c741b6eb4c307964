package dev.streamproof.gateway;

import com.google.adk.sessions.BaseSessionService;
import com.google.adk.sessions.InMemorySessionService;
import io.reactivex.rxjava3.plugins.RxJavaPlugins;
import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;

/**
 * streamproof's Java reference gateway: the seed's ChatStreamController on ADK Java 1.8 and
 * Spring Boot. Reads the environment contract, maps the corporate-proxy variables into the JVM,
 * binds 127.0.0.1 (PORT=0: an ephemeral port) and prints the URL it listens on.
 */
@SpringBootApplication
public class GatewayApplication {
  static final String PROG = "streamproof-java-gateway";
  private static Settings settings;

  public static void main(String[] args) {
    Map<String, String> env = System.getenv();
    try {
      settings = Settings.fromEnv(env);
      String proxy = CorporateProxy.apply(env); // before any HTTP client is built
      if (!proxy.isEmpty()) {
        System.err.println(PROG + ": corporate proxy: " + proxy);
      }
    } catch (Exception e) {
      System.err.println(PROG + ": " + e.getMessage());
      System.exit(2);
      return;
    }
    // A disposed run whose model call was cancelled still fails inside ADK; RxJava hands that
    // error, which no subscriber wants any more, to this handler instead of printing a trace.
    RxJavaPlugins.setErrorHandler(e -> System.err.println(
        PROG + ": after its run was disposed: " + (e.getCause() != null ? e.getCause() : e)));
    SpringApplication app = new SpringApplication(GatewayApplication.class);
    app.setDefaultProperties(Map.of(
        "server.address", "127.0.0.1",
        "server.port", Integer.toString(settings.port()),
        "spring.main.banner-mode", "off",
        "spring.main.log-startup-info", "false",
        "logging.level.root", "WARN",
        // The run bound is the emitter's own timeout; no container default may cut it shorter.
        "spring.mvc.async.request-timeout", "-1",
        "server.shutdown", "immediate"));
    app.run(args);
  }

  @Bean
  Settings settings() {
    return settings;
  }

  /** ADK's in-memory session store, shared by every run (each run has its own Runner). */
  @Bean
  BaseSessionService sessionService(Settings settings) {
    SupportAgent.useToolService(settings.toolUrl());
    return new InMemorySessionService();
  }

  @Bean
  ApplicationListener<WebServerInitializedEvent> announce() {
    return event -> System.out.println(
        PROG + " listening on http://127.0.0.1:" + event.getWebServer().getPort());
  }
}
