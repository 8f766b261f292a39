//! The ground everything else stands on: real Kafka clusters from `scripts/kafka` start, keep
//! data across a SIGKILL, survive losing a node, and enforce SASL logins.
//!
//! Tests that kill brokers use dedicated clusters (own ports), so the shared broker other tests
//! use is never disturbed.

use std::process::{Command, Stdio};

use mooring_testkit::{unique, Cluster};

#[test]
fn shared_cluster_answers_and_creates_topics() {
    let cluster = Cluster::shared();
    let out = cluster.tool_ok(
        "BrokerApiVersionsCommand",
        &["--bootstrap-server", cluster.bootstrap()],
    );
    // The broker lists the APIs a consumer needs, e.g. JoinGroup(11) and Fetch(1).
    assert!(
        out.contains("JoinGroup(11)"),
        "unexpected ApiVersions output:\n{out}"
    );
    assert!(
        out.contains("Fetch(1)"),
        "unexpected ApiVersions output:\n{out}"
    );

    let topic = unique("harness-topic");
    cluster.create_topic(&topic, 3);
    assert_eq!(
        cluster.end_offsets(&topic).len(),
        3,
        "three partitions, each at offset 0"
    );
    cluster.delete_topic(&topic);
}

#[test]
fn records_survive_a_broker_sigkill() {
    let cluster = Cluster::dedicated("t-crash", 1, 23000);
    let topic = unique("crash");
    cluster.create_topic(&topic, 4);
    cluster.produce_perf(&topic, 10_000, 100);
    assert_eq!(cluster.end_offsets(&topic).values().sum::<i64>(), 10_000);

    cluster.kill(1);
    cluster.restart(1);

    let after = cluster.end_offsets(&topic);
    assert_eq!(after.len(), 4);
    assert_eq!(
        after.values().sum::<i64>(),
        10_000,
        "end offsets after restart: {after:?}"
    );
}

#[test]
fn three_node_cluster_serves_metadata_with_a_node_down() {
    let cluster = Cluster::dedicated("t-trio", 3, 29000);
    let topic = unique("trio");
    cluster.create_topic(&topic, 6);
    cluster.kill(2);
    for node in [1, 3] {
        let out = cluster.tool_ok(
            "TopicCommand",
            &[
                "--bootstrap-server",
                cluster.node_address(node),
                "--describe",
                "--topic",
                &topic,
            ],
        );
        assert_eq!(
            out.lines().filter(|l| l.contains("Partition:")).count(),
            6,
            "node {node} should still describe all partitions:\n{out}"
        );
    }
    cluster.restart(2);
    let out = cluster.tool_ok(
        "BrokerApiVersionsCommand",
        &["--bootstrap-server", cluster.node_address(2)],
    );
    assert!(out.contains("127.0.0.1"), "node 2 answers again:\n{out}");
}

/// A Java client login with `sasl.jaas.config` for `mechanism` and `password`: true if it can list topics.
fn java_sasl_login(cluster: &Cluster, mechanism: &str, password: &str) -> bool {
    let module = if mechanism == "PLAIN" {
        "org.apache.kafka.common.security.plain.PlainLoginModule"
    } else {
        "org.apache.kafka.common.security.scram.ScramLoginModule"
    };
    let dir = std::env::temp_dir().join(unique("sasl"));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let config = dir.join("client.properties");
    std::fs::write(
        &config,
        format!(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism={mechanism}\n\
             sasl.jaas.config={module} required username=\"{}\" password=\"{password}\";\n\
             request.timeout.ms=10000\ndefault.api.timeout.ms=15000\n",
            cluster.var("MOORING_SASL_USER")
        ),
    )
    .expect("write client config");
    let out = cluster.tool(
        "TopicCommand",
        &[
            "--bootstrap-server",
            cluster.var("MOORING_BOOTSTRAP_SASL"),
            "--command-config",
            config.to_str().expect("utf-8 path"),
            "--list",
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);
    out.status.success()
}

#[test]
fn sasl_logins_need_the_right_password_java_client() {
    let cluster = Cluster::shared();
    for mechanism in ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] {
        let password = cluster.var("MOORING_SASL_PASSWORD").to_string();
        assert!(
            java_sasl_login(&cluster, mechanism, &password),
            "{mechanism} with the right password"
        );
        assert!(
            !java_sasl_login(&cluster, mechanism, "not-the-password"),
            "{mechanism} with a wrong password"
        );
    }
}

#[test]
fn sasl_logins_need_the_right_password_librdkafka() {
    let cluster = Cluster::shared();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/sasl_login.py");
    let login = |mechanism: &str, password: &str| {
        let out = Command::new(mooring_testkit::peer_python())
            .arg(&script)
            .args([
                cluster.var("MOORING_BOOTSTRAP_SASL"),
                mechanism,
                cluster.var("MOORING_SASL_USER"),
                password,
            ])
            .stdin(Stdio::null())
            .output()
            .expect("the peers' virtualenv is made by scripts/setup");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    for mechanism in ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] {
        let (ok, said) = login(mechanism, cluster.var("MOORING_SASL_PASSWORD"));
        assert!(
            ok,
            "confluent-kafka {mechanism} with the right password: {said}"
        );
        let (ok, said) = login(mechanism, "not-the-password");
        assert!(
            !ok,
            "confluent-kafka {mechanism} with a wrong password must fail: {said}"
        );
    }
}

/// Debian's kcat links librdkafka 2.0, whose SCRAM exchange a Kafka 4.4 broker refuses even with
/// the right password (seen here); PLAIN works, so kcat checks PLAIN and the newer librdkafka
/// above checks SCRAM.
#[test]
fn sasl_plain_login_with_librdkafka_kcat() {
    let cluster = Cluster::shared();
    let kcat = |password: &str| {
        Command::new("kcat")
            .args(["-b", cluster.var("MOORING_BOOTSTRAP_SASL"), "-L", "-m", "5"])
            .args([
                "-X",
                "security.protocol=SASL_PLAINTEXT",
                "-X",
                "sasl.mechanism=PLAIN",
            ])
            .arg("-X")
            .arg(format!(
                "sasl.username={}",
                cluster.var("MOORING_SASL_USER")
            ))
            .arg("-X")
            .arg(format!("sasl.password={password}"))
            .stdin(Stdio::null())
            .output()
            .expect("kcat is installed by scripts/setup")
    };
    let good = kcat(cluster.var("MOORING_SASL_PASSWORD"));
    assert!(
        good.status.success(),
        "kcat PLAIN login: {}",
        String::from_utf8_lossy(&good.stderr)
    );
    let bad = kcat("not-the-password");
    assert!(
        !bad.status.success(),
        "kcat PLAIN with a wrong password must fail"
    );
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("Authentication failed"),
        "kcat should report an authentication failure: {}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

#[test]
fn ssl_listener_verifies_against_the_test_ca() {
    let cluster = Cluster::shared();
    let kcat = |ca: &str| {
        Command::new("kcat")
            .args(["-b", cluster.var("MOORING_BOOTSTRAP_SSL"), "-L", "-m", "5"])
            .args(["-X", "security.protocol=SSL", "-X"])
            .arg(format!("ssl.ca.location={ca}"))
            .stdin(Stdio::null())
            .output()
            .expect("kcat is installed by scripts/setup")
    };
    let good = kcat(cluster.var("MOORING_SSL_CA"));
    assert!(
        good.status.success(),
        "kcat over SSL: {}",
        String::from_utf8_lossy(&good.stderr)
    );
    // The system CA bundle does not know our self-signed CA: verification must fail.
    let bad = kcat("/etc/ssl/certs/ca-certificates.crt");
    assert!(
        !bad.status.success(),
        "a TLS peer with an unknown CA must be refused"
    );
}

#[test]
fn group_state_is_read_from_consumer_group_command() {
    let cluster = Cluster::shared();
    let topic = unique("grp");
    let group = unique("grp");
    cluster.create_topic(&topic, 3);
    // A real Java consumer (VerifiableConsumer) in the group while we look at it.
    let mut consumer = Command::new(mooring_testkit::kafka_script())
        .args(["--cluster", cluster.name(), "tool", "VerifiableConsumer"])
        .args(["--bootstrap-server", cluster.bootstrap(), "--topic", &topic])
        .args(["--group-id", &group, "--group-instance-id", "static-1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start VerifiableConsumer");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let state = loop {
        match cluster.group_state(&group) {
            Some(s) if s.state == "Stable" => break s,
            _ if std::time::Instant::now() > deadline => {
                panic!("group {group} never became Stable")
            }
            _ => std::thread::sleep(std::time::Duration::from_millis(500)),
        }
    };
    let members = cluster.describe_members(&group);
    let _ = consumer.kill();
    let _ = consumer.wait();
    assert_eq!(state.members, 1);
    assert_eq!(state.assignment_strategy, "range");
    assert_eq!(members.len(), 1);
    assert_eq!(members[0].group_instance_id.as_deref(), Some("static-1"));
    assert_eq!(members[0].assignment.get(&topic), Some(&vec![0, 1, 2]));
}
