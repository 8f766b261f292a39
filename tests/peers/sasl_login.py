"""librdkafka peer (PyPI confluent-kafka): log in over SASL and list topics.

Usage: sasl_login.py BOOTSTRAP MECHANISM USER PASSWORD
Exit 0 and print "ok N" when the broker answered metadata, exit 1 and print the error otherwise.
"""
import sys

from confluent_kafka.admin import AdminClient

bootstrap, mechanism, user, password = sys.argv[1:5]
admin = AdminClient({
    "bootstrap.servers": bootstrap,
    "security.protocol": "SASL_PLAINTEXT",
    "sasl.mechanism": mechanism,
    "sasl.username": user,
    "sasl.password": password,
})
try:
    metadata = admin.list_topics(timeout=5)
except Exception as err:  # the KafkaException carries librdkafka's reason
    print("fail", err)
    sys.exit(1)
print("ok", len(metadata.brokers))
