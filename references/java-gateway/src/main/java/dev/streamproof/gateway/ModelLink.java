package dev.streamproof.gateway;

import com.google.adk.models.Gemini;
import com.google.genai.Client;
import com.google.genai.types.ClientOptions;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import okhttp3.Call;
import okhttp3.OkHttpClient;

/**
 * One run's model client: ADK 1.8's own Gemini set-up (OkHttp with no connect, read or write
 * timeout, google-genai's default retries) that remembers the run's HTTP calls, so that stopping
 * the run can cancel them.
 *
 * <p>ADK Java does not close a model call when its run is disposed: {@code
 * Gemini.generateContent} streams with {@code Flowable.fromFuture(stream).flatMapIterable(s ->
 * s)}, so disposal stops asking for chunks but nothing closes the google-genai ResponseStream or
 * cancels the HTTP call, and a thread blocked reading a quiet model stream (a black hole, with no
 * read timeout) stays blocked, its connection open, for ever. OkHttp's dispatcher cannot help:
 * it forgets a synchronous call once its response headers are in, while the body still streams.
 * Connections are shared between runs.
 */
final class ModelLink {
  private static final OkHttpClient SHARED = new OkHttpClient.Builder()
      .connectTimeout(Duration.ZERO)
      .readTimeout(Duration.ZERO)
      .writeTimeout(Duration.ZERO)
      .build();

  /** Every HTTP call this run made (a run makes at most maxLlmCalls, plus retries). */
  private final Set<Call> calls = ConcurrentHashMap.newKeySet();
  private final Gemini gemini;

  ModelLink(String modelName) {
    OkHttpClient http = SHARED.newBuilder()
        .addInterceptor(chain -> {
          calls.add(chain.call());
          return chain.proceed(chain.request());
        })
        .build();
    // Client.builder() reads GOOGLE_API_KEY and GOOGLE_GEMINI_BASE_URL from the environment,
    // and adds its retry interceptor behind this one.
    Client client = Client.builder()
        .clientOptions(ClientOptions.builder().customHttpClient(http).build())
        .build();
    this.gemini = Gemini.builder().modelName(modelName).apiClient(client).build();
  }

  Gemini gemini() {
    return gemini;
  }

  /**
   * Cancels every model call of this run in whatever phase it is (connecting, waiting for
   * headers, streaming its body); a finished call is left alone by OkHttp.
   */
  void cancel() {
    calls.forEach(Call::cancel);
  }
}
