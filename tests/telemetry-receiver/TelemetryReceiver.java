// A broker-side client telemetry receiver for the tests of the consumer's metrics push (KIP-714):
// a MetricsReporter the broker loads through `metric.reporters` (scripts/kafka start
// --metric-reporter), whose exporter appends each PushTelemetry the broker accepted to the file
// named by the broker property `mooring.telemetry.receiver.file`, one line per push:
//
//   <epoch ms> <client instance id> <terminating: true|false> <content type> <push interval ms> <payload, base64>
//
// The payload is what the broker hands to the exporter (the OTLP MetricsData, decompressed by the
// broker). crates/consumer/tests/metrics_push.rs compiles this file with javac against the
// kafka-clients jar and reads the lines.

import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.apache.kafka.server.telemetry.ClientTelemetryContext;
import org.apache.kafka.server.telemetry.ClientTelemetryExporter;
import org.apache.kafka.server.telemetry.ClientTelemetryExporterProvider;
import org.apache.kafka.server.telemetry.ClientTelemetryPayload;

public class TelemetryReceiver implements MetricsReporter, ClientTelemetryExporterProvider {
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

    @Override
    public ClientTelemetryExporter clientTelemetryExporter() {
        return this::record;
    }

    private synchronized void record(ClientTelemetryContext context, ClientTelemetryPayload payload) {
        if (file == null) {
            return;
        }
        ByteBuffer data = payload.data().duplicate();
        byte[] bytes = new byte[data.remaining()];
        data.get(bytes);
        String line = System.currentTimeMillis() + " " + payload.clientInstanceId() + " "
            + payload.isTerminating() + " " + payload.contentType() + " "
            + context.pushIntervalMs() + " " + Base64.getEncoder().encodeToString(bytes) + "\n";
        try (FileOutputStream out = new FileOutputStream(file, true)) {
            out.write(line.getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            System.err.println("TelemetryReceiver: cannot write " + file + ": " + e);
        }
    }
}
