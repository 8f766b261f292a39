// The part the broker-side client telemetry receivers of the metrics push test share: a
// MetricsReporter (loaded through `metric.reporters`, see scripts/kafka start --plugin-classpath)
// that appends each PushTelemetry the broker accepted to the file named by the broker property
// `mooring.telemetry.receiver.file`, one line per push:
//
//   <epoch ms> <client instance id> <terminating: true|false> <content type> <push interval ms, -1 unknown> <payload, base64>
//
// The payload is what the broker hands to the receiver: the OTLP MetricsData, decompressed.
// TelemetryReceiver (Kafka 4.x's exporter API) and LegacyTelemetryReceiver (the ClientTelemetry
// API of 3.7 and later, deprecated in 4.x) hand pushes to it; crates/consumer/tests/metrics_push.rs
// compiles this file and the one the broker's kafka-clients jar supports, and reads the lines.

import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.apache.kafka.server.telemetry.ClientTelemetryPayload;

public abstract class TelemetryLog implements MetricsReporter {
    private volatile String file;

    @Override
    public void configure(Map<String, ?> configs) {
        Object path = configs.get("mooring.telemetry.receiver.file");
        file = path == null ? null : path.toString();
    }

    @Override
    public void init(List<KafkaMetric> metrics) {}

    @Override
    public void metricChange(KafkaMetric metric) {}

    @Override
    public void metricRemoval(KafkaMetric metric) {}

    @Override
    public void close() {}

    protected synchronized void append(ClientTelemetryPayload payload, int pushIntervalMs) {
        if (file == null) {
            return;
        }
        ByteBuffer data = payload.data().duplicate();
        byte[] bytes = new byte[data.remaining()];
        data.get(bytes);
        String line = System.currentTimeMillis() + " " + payload.clientInstanceId() + " "
            + payload.isTerminating() + " " + payload.contentType() + " " + pushIntervalMs + " "
            + Base64.getEncoder().encodeToString(bytes) + "\n";
        try (FileOutputStream out = new FileOutputStream(file, true)) {
            out.write(line.getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            System.err.println("TelemetryLog: cannot write " + file + ": " + e);
        }
    }
}
