package dev.ledger.replay;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.Label;
import dev.ledger.PromotionSpec;
import dev.ledger.TaskSpec;
import dev.ledger.event.Event;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The streaming reader of payloads gives exactly what {@link Event#parse} over the JSON tree gives:
 * the same event for every payload the ledger writes, and for odd ones (types, duplicates, missing
 * fields, other label cases) the same event or the same error.
 */
class EventReaderTest {

  static final ObjectMapper JSON = new ObjectMapper();

  /** What the tree parse gives: the event, or the class and message of its error. */
  static Object tree(String kind, String payload) {
    try {
      return Event.parse("t1", kind, new dev.ledger.codegen.convert.JsonConverter().from(payload));
    } catch (RuntimeException e) {
      return e.getClass().getName() + ": " + e.getMessage();
    }
  }

  /** What the streaming reader gives, in the same terms. */
  static Object streamed(String kind, String payload) {
    try {
      return EventReader.read("t1", kind, payload);
    } catch (RuntimeException e) {
      return e.getClass().getName() + ": " + e.getMessage();
    }
  }

  @Property(tries = 500)
  void every_written_event_reads_back_equal(@ForAll("events") Event e) throws Exception {
    String payload = JSON.writeValueAsString(e.payload());
    assertThat(EventReader.read("t1", e.kind().wire(), payload)).isEqualTo(e);
    assertThat(streamed(e.kind().wire(), payload)).isEqualTo(tree(e.kind().wire(), payload));
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        // the plain shapes, with extra members and other member orders
        "created|{\"spec\":{\"priority\":5,\"classification\":\"public\",\"created_by\":\"p\",\"upstream_event\":null,\"origin\":null,\"depends_on\":[],\"requirements\":[\"a\"],\"body\":\"\",\"title\":\"T\",\"domain\":\"acme\",\"extra\":{\"x\":[1,{}]}},\"id\":\"t9\",\"v\":2}",
        "admitted|{}",
        "admitted|{\"anything\":[1,2,{\"a\":null}]}",
        "released|{}",
        "claimed|{\"until\":\"2025-03-01T09:05:02.048300Z\",\"holder\":\"w\"}",
        "heartbeat|{\"until\":\"2025-03-01T09:05:02Z\"}",
        "heartbeat|{\"until\":\"2025-03-01t09:05:02.1234567+01:30\"}",
        "completed|{}",
        "completed|{\"handoff\":null}",
        "invalidated|{\"reason\":\"r\"}",
        "rescored|{\"priority\":-9223372036854775808,\"why\":\"w\"}",
        "promoted|{\"spec\":{\"domain\":\"a\",\"entry\":\"e\",\"tier\":\"t\",\"by\":\"b\",\"author\":\"a\",\"why\":\"w\",\"classification\":\"restricted\",\"digest\":\"d\"}}",
        "promoted|{\"spec\":{\"domain\":\"a\",\"entry\":\"e\",\"tier\":\"t\",\"by\":\"b\",\"author\":\"a\",\"why\":\"w\",\"classification\":\"public\",\"digest\":\"d\",\"new_digest\":null},\"why_erased\":true}",
        // escapes and unicode
        "handoff_left|{\"handoff\":\"tab\\there\\nnew \\\"q\\\" \\\\ \\u00e9 \\ud83d\\ude80 \\ud800 lone\"}",
        // odd shapes the tree parse reads its own way or refuses: both must agree
        "claimed|{\"holder\":\"a\",\"holder\":\"b\",\"until\":\"2025-03-01T09:05:02Z\"}",
        "created|{\"id\":\"t9\",\"spec\":{\"domain\":\"acme\"},\"spec\":{\"domain\":\"acme\",\"title\":\"T\",\"body\":\"\",\"requirements\":[],\"depends_on\":[],\"created_by\":\"p\",\"classification\":\"public\",\"priority\":1}}",
        "created|{\"id\":7,\"spec\":{\"domain\":\"acme\",\"title\":\"T\",\"body\":\"\",\"requirements\":[1,null],\"depends_on\":[],\"origin\":5,\"created_by\":\"p\",\"classification\":\"PUBLIC\",\"priority\":\"12\"}}",
        "created|{\"id\":\"t9\",\"spec\":{\"domain\":\"acme\",\"title\":\"T\",\"body\":\"\",\"requirements\":[],\"depends_on\":[],\"created_by\":\"p\",\"classification\":\"public\",\"priority\":1.5}}",
        "created|{\"id\":\"t9\",\"spec\":{\"domain\":\"acme\",\"title\":\"T\",\"body\":\"\",\"requirements\":[],\"depends_on\":[],\"created_by\":\"p\",\"classification\":\"public\",\"priority\":99999999999999999999}}",
        "created|{\"id\":\"t9\",\"spec\":{\"domain\":\"acme\",\"title\":\"T\",\"requirements\":[],\"depends_on\":[],\"created_by\":\"p\",\"classification\":\"public\",\"priority\":1}}",
        "created|{\"id\":\"t9\",\"spec\":{\"domain\":\"acme\",\"title\":\"T\",\"body\":\"\",\"requirements\":[],\"depends_on\":[],\"created_by\":\"p\",\"classification\":\"secret\",\"priority\":1}}",
        "created|{\"id\":\"t9\",\"spec\":null}",
        "rescored|{\"priority\":true,\"why\":\"w\"}",
        "claimed|{\"holder\":\"w\",\"until\":\"2025-02-30T09:05:02.048300Z\"}",
        "claimed|{\"holder\":\"w\",\"until\":\"2025-03-01T24:05:02.048300Z\"}",
        "claimed|{\"holder\":\"w\",\"until\":\"2025-03-01T09:05:60.048300Z\"}",
        "claimed|{\"holder\":\"w\",\"until\":\"yesterday\"}",
        "claimed|{\"holder\":null,\"until\":\"2025-03-01T09:05:02Z\"}",
        "handoff_left|{\"handoff\":null}",
        "posted|[\"to\"]",
        "posted|\"x\"",
        "admitted|[]",
        "promoted|{\"spec\":{\"domain\":\"a\",\"entry\":\"e\",\"tier\":\"t\",\"by\":\"b\",\"author\":\"a\",\"why\":\"w\",\"classification\":\"public\",\"digest\":\"d\",\"new_digest\":3},\"why_erased\":\"true\"}",
        "promoted|{\"spec\":{\"domain\":\"a\",\"entry\":\"e\",\"tier\":\"t\",\"by\":\"b\",\"author\":\"a\",\"why\":\"w\",\"classification\":\"public\",\"digest\":\"d\"},\"why_erased\":1}",
        "promoted|{\"spec\":{\"domain\":\"a\",\"entry\":\"e\",\"tier\":\"t\",\"by\":\"b\",\"author\":\"a\",\"why\":\"w\",\"classification\":\"public\",\"digest\":\"d\"},\"why_erased\":null}",
        "exploded|{}",
        "claimed|{\"holder\":\"w\",",
        "claimed|not json",
        "claimed|{} trailing",
      })
  void odd_payloads_read_as_the_tree_parse_reads_them(String kind, String payload) {
    assertThat(streamed(kind, payload)).isEqualTo(tree(kind, payload));
  }

  @Provide
  Arbitrary<Event> events() {
    Arbitrary<String> text =
        Arbitraries.strings()
            .withCharRange('\u0001', '\uffff')
            .withChars('\t', '\n', '\r', '\\', '"', ',')
            .ofMinLength(0)
            .ofMaxLength(40);
    Arbitrary<String> nullable = text.injectNull(0.3);
    Arbitrary<List<String>> names = text.list().ofMaxSize(4).map(ArrayList::new);
    Arbitrary<Label> label = Arbitraries.of(Label.values());
    Arbitrary<Instant> time =
        Arbitraries.longs()
            .between(0, 253_402_300_799_999_999L)
            .map(us -> Instant.ofEpochSecond(us / 1_000_000, us % 1_000_000 * 1000));
    Arbitrary<TaskSpec> spec =
        Combinators.combine(
                Combinators.combine(text, text, text, names, names).as(Arrays::asList),
                Combinators.combine(nullable, nullable, text, label, Arbitraries.longs())
                    .as(Arrays::asList))
            .as(
                (a, b) ->
                    new TaskSpec(
                        (String) a.get(0),
                        (String) a.get(1),
                        (String) a.get(2),
                        cast(a.get(3)),
                        cast(a.get(4)),
                        (String) b.get(0),
                        (String) b.get(1),
                        (String) b.get(2),
                        (Label) b.get(3),
                        (Long) b.get(4)));
    Arbitrary<PromotionSpec> promotion =
        Combinators.combine(
                Combinators.combine(text, text, text, text, text).as(Arrays::asList),
                Combinators.combine(text, label, text, text).as(Arrays::asList))
            .as(
                (a, b) ->
                    new PromotionSpec(
                        a.get(0),
                        a.get(1),
                        a.get(2),
                        a.get(3),
                        a.get(4),
                        (String) b.get(0),
                        (Label) b.get(1),
                        (String) b.get(2),
                        (String) b.get(3)));
    return Arbitraries.oneOf(
        Combinators.combine(text, spec).as(Event.Created::new),
        Arbitraries.just(new Event.Admitted()),
        Arbitraries.just(new Event.Released()),
        Combinators.combine(text, time).as(Event.Claimed::new),
        time.map(Event.Heartbeat::new),
        text.map(Event.HandoffLeft::new),
        nullable.map(Event.Completed::new),
        Combinators.combine(text, nullable).as(Event.Invalidated::new),
        text.map(Event.Posted::new),
        Combinators.combine(Arbitraries.longs(), text).as(Event.Rescored::new),
        Combinators.combine(promotion, Arbitraries.of(true, false)).as(Event.Promoted::new));
  }

  @SuppressWarnings("unchecked")
  private static List<String> cast(Object o) {
    return (List<String>) o;
  }
}
