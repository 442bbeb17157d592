package io.yarpc.transport.http.internal;

import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http2.Http2Headers;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * An HTTP/2 header block seen as Netty's {@link HttpHeaders}, with no copy: what lets the h2c inbound hand
 * a request's HPACK-decoded fields to the code that reads HTTP/1.1 heads ({@link RequestDecoder}, {@link
 * WireHeaders}), and lets {@link InboundResponses} write an answer's fields straight into the block the
 * HTTP/2 encoder takes. Names are matched and stored in lower case (HTTP/2 field names are lower case, RFC
 * 9113 section 8.2.1), so lookups stay case-insensitive like HTTP/1.1's; pseudo-header fields ({@code
 * :method}, {@code :path}...) are left out of iteration, size and names, as an HTTP/1.1 head has none.
 *
 * <p>Not thread-safe, like the block it wraps.
 */
final class Http2HeadersView extends HttpHeaders {
  private static final Map<String, String> LOWER = new java.util.HashMap<>();

  static {
    for (String name :
        new String[] {
          WireHeaders.CALLER,
          WireHeaders.SERVICE,
          WireHeaders.PROCEDURE,
          WireHeaders.ENCODING,
          WireHeaders.TTL_MS,
          WireHeaders.SHARD_KEY,
          WireHeaders.ROUTING_KEY,
          WireHeaders.ROUTING_DELEGATE,
          WireHeaders.CALLER_PROCEDURE,
          WireHeaders.ACCEPTS_BOTH_RESPONSE_ERROR,
          WireHeaders.BOTH_RESPONSE_ERROR,
          WireHeaders.STATUS,
          WireHeaders.ERROR_CODE,
          WireHeaders.ERROR_NAME,
          WireHeaders.ERROR_MESSAGE,
          WireHeaders.ERROR_DETAILS,
          WireHeaders.APPLICATION_ERROR_CODE,
          WireHeaders.APPLICATION_ERROR_NAME,
          WireHeaders.APPLICATION_ERROR_DETAILS,
        }) {
      LOWER.put(name, name.toLowerCase(Locale.ROOT));
    }
  }

  private final Http2Headers headers;

  Http2HeadersView(Http2Headers headers) {
    this.headers = headers;
  }

  /** The HTTP/2 block behind {@code h}, or null when {@code h} is not a view. */
  static Http2Headers unwrap(HttpHeaders h) {
    return h instanceof Http2HeadersView v ? v.headers : null;
  }

  /** {@code name} in lower case (the transport's own names without a new string each time). */
  static CharSequence lower(CharSequence name) {
    if (name instanceof String s) {
      String known = LOWER.get(s);
      return known != null ? known : s.toLowerCase(Locale.ROOT);
    }
    return io.netty.util.AsciiString.of(name).toLowerCase();
  }

  private static boolean isPseudo(CharSequence name) {
    return Http2Headers.PseudoHeaderName.hasPseudoHeaderFormat(name);
  }

  @Override
  public String get(String name) {
    return get((CharSequence) name);
  }

  @Override
  public String get(CharSequence name) {
    CharSequence v = headers.get(lower(name));
    return v == null ? null : v.toString();
  }

  @Override
  public Integer getInt(CharSequence name) {
    return headers.getInt(lower(name));
  }

  @Override
  public int getInt(CharSequence name, int defaultValue) {
    return headers.getInt(lower(name), defaultValue);
  }

  @Override
  public Short getShort(CharSequence name) {
    return headers.getShort(lower(name));
  }

  @Override
  public short getShort(CharSequence name, short defaultValue) {
    return headers.getShort(lower(name), defaultValue);
  }

  @Override
  public Long getTimeMillis(CharSequence name) {
    return headers.getTimeMillis(lower(name));
  }

  @Override
  public long getTimeMillis(CharSequence name, long defaultValue) {
    return headers.getTimeMillis(lower(name), defaultValue);
  }

  @Override
  public List<String> getAll(String name) {
    List<CharSequence> all = headers.getAll(lower(name));
    List<String> out = new ArrayList<>(all.size());
    for (CharSequence v : all) {
      out.add(v.toString());
    }
    return out;
  }

  @Override
  public List<Map.Entry<String, String>> entries() {
    List<Map.Entry<String, String>> out = new ArrayList<>(headers.size());
    for (Map.Entry<String, String> e : this) {
      out.add(e);
    }
    return out;
  }

  @Override
  public boolean contains(String name) {
    return headers.contains(lower(name));
  }

  @Override
  public boolean contains(CharSequence name) {
    return headers.contains(lower(name));
  }

  @Override
  public Iterator<Map.Entry<String, String>> iterator() {
    Iterator<Map.Entry<CharSequence, CharSequence>> it = iteratorCharSequence();
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return it.hasNext();
      }

      @Override
      public Map.Entry<String, String> next() {
        Map.Entry<CharSequence, CharSequence> e = it.next();
        return new AbstractMap.SimpleImmutableEntry<>(
            e.getKey().toString(), e.getValue().toString());
      }
    };
  }

  @Override
  public Iterator<Map.Entry<CharSequence, CharSequence>> iteratorCharSequence() {
    Iterator<Map.Entry<CharSequence, CharSequence>> it = headers.iterator();
    return new Iterator<>() {
      private Map.Entry<CharSequence, CharSequence> next = advance();

      private Map.Entry<CharSequence, CharSequence> advance() {
        while (it.hasNext()) {
          Map.Entry<CharSequence, CharSequence> e = it.next();
          if (!isPseudo(e.getKey())) {
            return e;
          }
        }
        return null;
      }

      @Override
      public boolean hasNext() {
        return next != null;
      }

      @Override
      public Map.Entry<CharSequence, CharSequence> next() {
        if (next == null) {
          throw new NoSuchElementException();
        }
        Map.Entry<CharSequence, CharSequence> e = next;
        next = advance();
        return e;
      }
    };
  }

  @Override
  public boolean isEmpty() {
    return size() == 0;
  }

  @Override
  public int size() {
    int n = 0;
    for (Map.Entry<CharSequence, CharSequence> e : headers) {
      if (!isPseudo(e.getKey())) {
        n++;
      }
    }
    return n;
  }

  @Override
  public Set<String> names() {
    Set<String> out = new LinkedHashSet<>();
    for (Map.Entry<String, String> e : this) {
      out.add(e.getKey());
    }
    return out;
  }

  @Override
  public HttpHeaders add(String name, Object value) {
    return add((CharSequence) name, value);
  }

  @Override
  public HttpHeaders add(CharSequence name, Object value) {
    headers.addObject(lower(name), value);
    return this;
  }

  @Override
  public HttpHeaders add(String name, Iterable<?> values) {
    headers.addObject(lower(name), values);
    return this;
  }

  @Override
  public HttpHeaders addInt(CharSequence name, int value) {
    headers.addInt(lower(name), value);
    return this;
  }

  @Override
  public HttpHeaders addShort(CharSequence name, short value) {
    headers.addShort(lower(name), value);
    return this;
  }

  @Override
  public HttpHeaders set(String name, Object value) {
    return set((CharSequence) name, value);
  }

  @Override
  public HttpHeaders set(CharSequence name, Object value) {
    headers.setObject(lower(name), value);
    return this;
  }

  @Override
  public HttpHeaders set(String name, Iterable<?> values) {
    headers.setObject(lower(name), values);
    return this;
  }

  @Override
  public HttpHeaders setInt(CharSequence name, int value) {
    headers.setInt(lower(name), value);
    return this;
  }

  @Override
  public HttpHeaders setShort(CharSequence name, short value) {
    headers.setShort(lower(name), value);
    return this;
  }

  @Override
  public HttpHeaders remove(String name) {
    headers.remove(lower(name));
    return this;
  }

  @Override
  public HttpHeaders remove(CharSequence name) {
    headers.remove(lower(name));
    return this;
  }

  @Override
  public HttpHeaders clear() {
    headers.clear();
    return this;
  }
}
