// The client telemetry receiver of Kafka 4.x (ClientTelemetryExporterProvider, which replaces
// the deprecated ClientTelemetry): each push goes to TelemetryLog's file, with the push interval.

import org.apache.kafka.server.telemetry.ClientTelemetryExporter;
import org.apache.kafka.server.telemetry.ClientTelemetryExporterProvider;

public class TelemetryReceiver extends TelemetryLog implements ClientTelemetryExporterProvider {
    @Override
    public ClientTelemetryExporter clientTelemetryExporter() {
        return (context, payload) -> append(payload, context.pushIntervalMs());
    }
}
