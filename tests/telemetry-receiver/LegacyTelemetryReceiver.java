// The client telemetry receiver of brokers without Kafka 4.x's exporter API (3.7 to 3.9):
// ClientTelemetry, whose receiver is not told the push interval (logged as -1).

import org.apache.kafka.server.telemetry.ClientTelemetry;
import org.apache.kafka.server.telemetry.ClientTelemetryReceiver;

public class LegacyTelemetryReceiver extends TelemetryLog implements ClientTelemetry {
    @Override
    public ClientTelemetryReceiver clientReceiver() {
        return (context, payload) -> append(payload, -1);
    }
}
