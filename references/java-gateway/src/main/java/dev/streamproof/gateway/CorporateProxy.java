package dev.streamproof.gateway;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Collection;
import java.util.Map;

/**
 * The corporate-proxy path: maps HTTPS_PROXY / HTTP_PROXY / NO_PROXY and SSL_CERT_FILE into the
 * JVM before any HTTP client is built. google-genai for Java (OkHttp underneath) reads neither
 * variable; it uses the JVM's default ProxySelector (the {@code https.proxyHost} properties) and
 * the default trust store ({@code javax.net.ssl.trustStore}), both fixed on first use.
 */
final class CorporateProxy {
  private CorporateProxy() {}

  /** Applies the proxy variables of {@code env}; returns a one-line description, or "". */
  static String apply(Map<String, String> env) throws IOException, GeneralSecurityException {
    StringBuilder said = new StringBuilder();
    String https = first(env, "HTTPS_PROXY", "https_proxy");
    String http = first(env, "HTTP_PROXY", "http_proxy");
    if (https != null) {
      setProxy("https", https);
      said.append("https via ").append(https).append("; ");
    }
    if (http != null) {
      setProxy("http", http);
      said.append("http via ").append(http).append("; ");
    }
    if (https != null || http != null) {
      // The JVM's default http.nonProxyHosts exempts localhost and 127.*; the contract says an
      // empty NO_PROXY exempts nothing, so the fake model on loopback goes through the proxy.
      String noProxy = first(env, "NO_PROXY", "no_proxy");
      System.setProperty("http.nonProxyHosts", noProxy == null ? "" : toJavaPattern(noProxy));
    }
    String caFile = env.get("SSL_CERT_FILE");
    if (caFile != null && !caFile.isBlank()) {
      Path store = trustStoreWith(Path.of(caFile));
      System.setProperty("javax.net.ssl.trustStore", store.toString());
      System.setProperty("javax.net.ssl.trustStorePassword", "changeit");
      System.setProperty("javax.net.ssl.trustStoreType", "PKCS12");
      said.append("trusting ").append(caFile);
    }
    return said.toString();
  }

  private static String first(Map<String, String> env, String... names) {
    for (String name : names) {
      String v = env.get(name);
      if (v != null && !v.isBlank()) {
        return v.strip();
      }
    }
    return null;
  }

  private static void setProxy(String scheme, String value) {
    URI uri = URI.create(value.contains("://") ? value : "http://" + value);
    if (uri.getHost() == null) {
      throw new IllegalArgumentException(
          scheme.toUpperCase() + "_PROXY: no host in '" + value + "'");
    }
    int port = uri.getPort() > 0 ? uri.getPort() : 80;
    System.setProperty(scheme + ".proxyHost", uri.getHost());
    System.setProperty(scheme + ".proxyPort", Integer.toString(port));
  }

  /** NO_PROXY ({@code a.com,.b.com,10.0.0.1}) to the JVM's {@code a.com|*.b.com|10.0.0.1}. */
  static String toJavaPattern(String noProxy) {
    StringBuilder out = new StringBuilder();
    for (String item : noProxy.split(",")) {
      String host = item.strip();
      if (host.isEmpty()) {
        continue;
      }
      if (host.startsWith(".")) {
        host = "*" + host;
      }
      out.append(out.length() == 0 ? "" : "|").append(host);
    }
    return out.toString();
  }

  /** A PKCS12 trust store holding the JDK's own CAs and every certificate of the PEM file. */
  private static Path trustStoreWith(Path pem) throws IOException, GeneralSecurityException {
    if (!Files.isReadable(pem)) {
      throw new IllegalArgumentException("SSL_CERT_FILE: cannot read '" + pem + "'");
    }
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    Path jdkCacerts = Path.of(System.getProperty("java.home"), "lib", "security", "cacerts");
    if (Files.isReadable(jdkCacerts)) {
      KeyStore jdk = KeyStore.getInstance(KeyStore.getDefaultType());
      try (InputStream in = Files.newInputStream(jdkCacerts)) {
        jdk.load(in, null);
      }
      for (String alias : java.util.Collections.list(jdk.aliases())) {
        if (jdk.isCertificateEntry(alias)) {
          store.setCertificateEntry("jdk-" + alias, jdk.getCertificate(alias));
        }
      }
    }
    Collection<? extends Certificate> certs;
    try (InputStream in = Files.newInputStream(pem)) {
      certs = CertificateFactory.getInstance("X.509").generateCertificates(in);
    }
    if (certs.isEmpty()) {
      throw new IllegalArgumentException("SSL_CERT_FILE: no certificate in '" + pem + "'");
    }
    int i = 0;
    for (Certificate cert : certs) {
      store.setCertificateEntry("ssl-cert-file-" + i++, cert);
    }
    Path file = Files.createTempFile("streamproof-java-gateway-", ".p12");
    file.toFile().deleteOnExit();
    try (OutputStream out = Files.newOutputStream(file)) {
      store.store(out, "changeit".toCharArray());
    }
    return file;
  }
}
