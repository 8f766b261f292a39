// Golden bytes for mooring-wire's message codec, written by Kafka's own Java classes.
//
//   java -cp '/path/to/kafka-4.4.0/libs/*' crates/wire/tests/golden/java/GenMessages.java [out-dir]
//
// Builds representative messages with the generated *Data classes of kafka-clients 4.4.0
// (org.apache.kafka.common.message), serializes each at the listed versions with
// MessageUtil.toByteBufferAccessor, and writes one annotated hex file per (message, version) into
// out-dir (default crates/wire/tests/golden/messages). crates/wire/tests/golden_messages.rs decodes
// every file, checks the values listed here, re-encodes and compares the bytes. Values differ by
// version only where a field does not exist at that version.

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.*;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.protocol.types.RawTaggedField;
import org.apache.kafka.common.record.internal.MemoryRecords;

public class GenMessages {
    static Path out;
    static int count = 0;

    // Fixed topic ids so the Rust side can check them: bytes 0x01..0x10 and 0xa0..0xaf.
    static final Uuid TOPIC_A = new Uuid(0x0102030405060708L, 0x090a0b0c0d0e0f10L);
    static final Uuid TOPIC_B = new Uuid(0xa0a1a2a3a4a5a6a7L, 0xa8a9aaabacadaeafL);

    static byte[] bytes(int... b) {
        byte[] out = new byte[b.length];
        for (int i = 0; i < b.length; i++) out[i] = (byte) b[i];
        return out;
    }

    static void emit(String file, ApiMessage m, int version) throws Exception {
        short v = (short) version;
        ByteBuffer buf = MessageUtil.toByteBufferAccessor(m, v).buffer();
        byte[] raw = new byte[buf.remaining()];
        buf.get(raw);
        String kind = m.getClass().getSimpleName().replace("Data", "");
        StringBuilder sb = new StringBuilder();
        sb.append("# Serialized by the Java kafka-clients 4.4.0 classes (org.apache.kafka.common.message.")
          .append(m.getClass().getSimpleName()).append(", MessageUtil.toByteBufferAccessor)\n");
        sb.append("# by crates/wire/tests/golden/java/GenMessages.java. Body only, no size or header.\n");
        sb.append("# message: ").append(kind).append("\n");
        sb.append("# version: ").append(v).append("\n");
        sb.append("# length: ").append(raw.length).append("\n");
        sb.append("# values (Java toString): ").append(m.toString().replace("\n", " ")).append("\n");
        for (int i = 0; i < raw.length; i += 16) {
            StringBuilder line = new StringBuilder();
            for (int j = i; j < Math.min(raw.length, i + 16); j++) {
                if (j > i) line.append(' ');
                line.append(String.format("%02x", raw[j] & 0xff));
            }
            sb.append(line).append("\n");
        }
        Files.writeString(out.resolve(file + "_v" + v + ".hex"), sb.toString());
        count++;
    }

    public static void main(String[] args) throws Exception {
        out = Path.of(args.length > 0 ? args[0] : "crates/wire/tests/golden/messages");
        Files.createDirectories(out);

        // ApiVersions
        for (int v : new int[] {0, 3, 4}) {
            ApiVersionsRequestData r = new ApiVersionsRequestData();
            if (v >= 3) r.setClientSoftwareName("mooring").setClientSoftwareVersion("0.1.0");
            emit("api_versions_request", r, v);
        }
        for (int v : new int[] {0, 3}) {
            ApiVersionsResponseData r = new ApiVersionsResponseData().setErrorCode((short) 0);
            r.apiKeys().add(new ApiVersionsResponseData.ApiVersion().setApiKey((short) 1).setMinVersion((short) 4).setMaxVersion((short) 18));
            r.apiKeys().add(new ApiVersionsResponseData.ApiVersion().setApiKey((short) 11).setMinVersion((short) 0).setMaxVersion((short) 9));
            if (v >= 1) r.setThrottleTimeMs(5);
            if (v >= 3) {
                r.supportedFeatures().add(new ApiVersionsResponseData.SupportedFeatureKey().setName("metadata.version").setMinVersion((short) 7).setMaxVersion((short) 27));
                r.setFinalizedFeaturesEpoch(42L);
                r.finalizedFeatures().add(new ApiVersionsResponseData.FinalizedFeatureKey().setName("metadata.version").setMinVersionLevel((short) 27).setMaxVersionLevel((short) 27));
                r.unknownTaggedFields().add(new RawTaggedField(7, bytes(0xca, 0xfe)));
            }
            emit("api_versions_response", r, v);
        }

        // Metadata
        for (int v : new int[] {1, 4, 12}) {
            MetadataRequestData r = new MetadataRequestData();
            r.topics().add(new MetadataRequestData.MetadataRequestTopic().setName("orders"));
            if (v >= 10) r.topics().add(new MetadataRequestData.MetadataRequestTopic().setTopicId(TOPIC_B).setName(null));
            else r.topics().add(new MetadataRequestData.MetadataRequestTopic().setName("payments"));
            if (v >= 4) r.setAllowAutoTopicCreation(false);
            if (v >= 8) r.setIncludeTopicAuthorizedOperations(true);
            emit("metadata_request", r, v);
        }
        emit("metadata_request_all_topics", new MetadataRequestData().setTopics(null), 9);
        for (int v : new int[] {1, 7, 12}) {
            MetadataResponseData r = new MetadataResponseData();
            if (v >= 3) r.setThrottleTimeMs(0);
            r.brokers().add(new MetadataResponseData.MetadataResponseBroker().setNodeId(1).setHost("broker-1").setPort(9092).setRack("rack-a"));
            r.brokers().add(new MetadataResponseData.MetadataResponseBroker().setNodeId(2).setHost("broker-2").setPort(9093).setRack(null));
            if (v >= 2) r.setClusterId("cluster-xyz");
            r.setControllerId(1);
            MetadataResponseData.MetadataResponseTopic t = new MetadataResponseData.MetadataResponseTopic()
                .setErrorCode((short) 0).setName("orders").setIsInternal(false);
            if (v >= 10) t.setTopicId(TOPIC_A);
            if (v >= 8) t.setTopicAuthorizedOperations(0x0fe8);
            MetadataResponseData.MetadataResponsePartition p0 = new MetadataResponseData.MetadataResponsePartition()
                .setErrorCode((short) 0).setPartitionIndex(0).setLeaderId(1)
                .setReplicaNodes(Arrays.asList(1, 2)).setIsrNodes(Arrays.asList(1));
            if (v >= 7) p0.setLeaderEpoch(5);
            if (v >= 5) p0.setOfflineReplicas(Arrays.asList(2));
            t.partitions().add(p0);
            t.partitions().add(new MetadataResponseData.MetadataResponsePartition()
                .setErrorCode((short) 5).setPartitionIndex(1).setLeaderId(-1));
            r.topics().add(t);
            r.topics().add(new MetadataResponseData.MetadataResponseTopic().setErrorCode((short) 3).setName("missing"));
            emit("metadata_response", r, v);
        }

        // FindCoordinator
        emit("find_coordinator_request", new FindCoordinatorRequestData().setKey("group-1"), 0);
        emit("find_coordinator_request", new FindCoordinatorRequestData().setKey("group-1").setKeyType((byte) 0), 3);
        emit("find_coordinator_request", new FindCoordinatorRequestData().setKeyType((byte) 0)
            .setCoordinatorKeys(Arrays.asList("group-1", "group-2")), 6);
        emit("find_coordinator_response", new FindCoordinatorResponseData().setThrottleTimeMs(1).setErrorCode((short) 0)
            .setErrorMessage(null).setNodeId(3).setHost("broker-3").setPort(9094), 2);
        {
            FindCoordinatorResponseData r = new FindCoordinatorResponseData().setThrottleTimeMs(0);
            r.coordinators().add(new FindCoordinatorResponseData.Coordinator().setKey("group-1").setNodeId(3).setHost("broker-3").setPort(9094).setErrorCode((short) 0).setErrorMessage(null));
            r.coordinators().add(new FindCoordinatorResponseData.Coordinator().setKey("group-2").setNodeId(-1).setHost("").setPort(-1).setErrorCode((short) 15).setErrorMessage("The coordinator is not available."));
            emit("find_coordinator_response", r, 4);
        }

        // JoinGroup
        for (int v : new int[] {2, 5, 9}) {
            JoinGroupRequestData r = new JoinGroupRequestData().setGroupId("group-1").setSessionTimeoutMs(45000)
                .setRebalanceTimeoutMs(300000).setMemberId("").setProtocolType("consumer");
            if (v >= 5) r.setGroupInstanceId("instance-1");
            if (v >= 8) r.setReason("rebalance after metadata change");
            r.protocols().add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName("cooperative-sticky").setMetadata(bytes(0, 3, 0, 0, 0, 1, 0, 6, 'o', 'r', 'd', 'e', 'r', 's')));
            r.protocols().add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range").setMetadata(bytes()));
            emit("join_group_request", r, v);
        }
        for (int v : new int[] {2, 5, 9}) {
            JoinGroupResponseData r = new JoinGroupResponseData().setThrottleTimeMs(0).setErrorCode((short) 0)
                .setGenerationId(7).setProtocolName("range").setLeader("member-a").setMemberId("member-a");
            if (v >= 7) r.setProtocolType("consumer");
            if (v >= 9) r.setSkipAssignment(false);
            JoinGroupResponseData.JoinGroupResponseMember a = new JoinGroupResponseData.JoinGroupResponseMember().setMemberId("member-a").setMetadata(bytes(0, 1, 2));
            JoinGroupResponseData.JoinGroupResponseMember b = new JoinGroupResponseData.JoinGroupResponseMember().setMemberId("member-b").setMetadata(bytes());
            if (v >= 5) a.setGroupInstanceId("instance-1");
            r.members().add(a);
            r.members().add(b);
            emit("join_group_response", r, v);
        }
        emit("join_group_response_member_id_required", new JoinGroupResponseData().setErrorCode((short) 79)
            .setGenerationId(-1).setProtocolType(null).setProtocolName(null).setLeader("").setMemberId("consumer-1-abc"), 9);

        // SyncGroup
        for (int v : new int[] {1, 3, 5}) {
            SyncGroupRequestData r = new SyncGroupRequestData().setGroupId("group-1").setGenerationId(7).setMemberId("member-a");
            if (v >= 3) r.setGroupInstanceId("instance-1");
            if (v >= 5) r.setProtocolType("consumer").setProtocolName("range");
            r.assignments().add(new SyncGroupRequestData.SyncGroupRequestAssignment().setMemberId("member-a").setAssignment(bytes(0, 3, 0, 0, 0, 0)));
            r.assignments().add(new SyncGroupRequestData.SyncGroupRequestAssignment().setMemberId("member-b").setAssignment(bytes()));
            emit("sync_group_request", r, v);
        }
        for (int v : new int[] {0, 4, 5}) {
            SyncGroupResponseData r = new SyncGroupResponseData().setErrorCode((short) 0).setAssignment(bytes(0, 3, 0, 0, 0, 1, 0, 6, 'o', 'r', 'd', 'e', 'r', 's', 0, 0, 0, 1, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff));
            if (v >= 1) r.setThrottleTimeMs(2);
            if (v >= 5) r.setProtocolType("consumer").setProtocolName(null);
            emit("sync_group_response", r, v);
        }

        // Heartbeat
        for (int v : new int[] {0, 3, 4}) {
            HeartbeatRequestData r = new HeartbeatRequestData().setGroupId("group-1").setGenerationId(7).setMemberId("member-a");
            if (v >= 3) r.setGroupInstanceId(v == 4 ? null : "instance-1");
            emit("heartbeat_request", r, v);
        }
        for (int v : new int[] {0, 4}) {
            HeartbeatResponseData r = new HeartbeatResponseData().setErrorCode((short) 27);
            if (v >= 1) r.setThrottleTimeMs(100);
            emit("heartbeat_response", r, v);
        }

        // LeaveGroup
        emit("leave_group_request", new LeaveGroupRequestData().setGroupId("group-1").setMemberId("member-a"), 2);
        for (int v : new int[] {3, 5}) {
            LeaveGroupRequestData r = new LeaveGroupRequestData().setGroupId("group-1");
            LeaveGroupRequestData.MemberIdentity m = new LeaveGroupRequestData.MemberIdentity().setMemberId("member-a").setGroupInstanceId("instance-1");
            if (v >= 5) m.setReason("the consumer is being closed");
            r.members().add(m);
            r.members().add(new LeaveGroupRequestData.MemberIdentity().setMemberId("").setGroupInstanceId("instance-2"));
            emit("leave_group_request", r, v);
        }
        for (int v : new int[] {0, 3, 5}) {
            LeaveGroupResponseData r = new LeaveGroupResponseData().setErrorCode((short) 0);
            if (v >= 1) r.setThrottleTimeMs(0);
            if (v >= 3) {
                r.members().add(new LeaveGroupResponseData.MemberResponse().setMemberId("member-a").setGroupInstanceId("instance-1").setErrorCode((short) 0));
                r.members().add(new LeaveGroupResponseData.MemberResponse().setMemberId("").setGroupInstanceId(null).setErrorCode((short) 25));
            }
            emit("leave_group_response", r, v);
        }

        // OffsetCommit
        for (int v : new int[] {2, 7, 9, 10}) {
            OffsetCommitRequestData r = new OffsetCommitRequestData().setGroupId("group-1").setGenerationIdOrMemberEpoch(7).setMemberId("member-a");
            if (v >= 7) r.setGroupInstanceId("instance-1");
            if (v <= 4) r.setRetentionTimeMs(-1);
            OffsetCommitRequestData.OffsetCommitRequestTopic t = new OffsetCommitRequestData.OffsetCommitRequestTopic();
            if (v >= 10) t.setTopicId(TOPIC_A); else t.setName("orders");
            OffsetCommitRequestData.OffsetCommitRequestPartition p0 = new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(0).setCommittedOffset(1234).setCommittedMetadata(null);
            OffsetCommitRequestData.OffsetCommitRequestPartition p1 = new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(1).setCommittedOffset(0).setCommittedMetadata("meta");
            if (v >= 6) p0.setCommittedLeaderEpoch(4);
            t.partitions().add(p0);
            t.partitions().add(p1);
            r.topics().add(t);
            emit("offset_commit_request", r, v);
        }
        for (int v : new int[] {2, 8, 10}) {
            OffsetCommitResponseData r = new OffsetCommitResponseData();
            if (v >= 3) r.setThrottleTimeMs(0);
            OffsetCommitResponseData.OffsetCommitResponseTopic t = new OffsetCommitResponseData.OffsetCommitResponseTopic();
            if (v >= 10) t.setTopicId(TOPIC_A); else t.setName("orders");
            t.partitions().add(new OffsetCommitResponseData.OffsetCommitResponsePartition().setPartitionIndex(0).setErrorCode((short) 0));
            t.partitions().add(new OffsetCommitResponseData.OffsetCommitResponsePartition().setPartitionIndex(1).setErrorCode((short) 22));
            r.topics().add(t);
            emit("offset_commit_response", r, v);
        }

        // OffsetFetch
        for (int v : new int[] {1, 7}) {
            OffsetFetchRequestData r = new OffsetFetchRequestData().setGroupId("group-1");
            List<OffsetFetchRequestData.OffsetFetchRequestTopic> topics = new ArrayList<>();
            topics.add(new OffsetFetchRequestData.OffsetFetchRequestTopic().setName("orders").setPartitionIndexes(Arrays.asList(0, 1, 2)));
            r.setTopics(topics);
            if (v >= 7) r.setRequireStable(true);
            emit("offset_fetch_request", r, v);
        }
        emit("offset_fetch_request_all_topics", new OffsetFetchRequestData().setGroupId("group-1").setTopics(null).setRequireStable(false), 7);
        for (int v : new int[] {8, 9, 10}) {
            OffsetFetchRequestData r = new OffsetFetchRequestData().setRequireStable(true);
            OffsetFetchRequestData.OffsetFetchRequestGroup g1 = new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId("group-1");
            if (v >= 9) g1.setMemberId("member-a").setMemberEpoch(3);
            OffsetFetchRequestData.OffsetFetchRequestTopics t = new OffsetFetchRequestData.OffsetFetchRequestTopics().setPartitionIndexes(Arrays.asList(0, 1));
            if (v >= 10) t.setTopicId(TOPIC_A); else t.setName("orders");
            g1.setTopics(new ArrayList<>(List.of(t)));
            r.groups().add(g1);
            r.groups().add(new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId("group-2").setTopics(null));
            emit("offset_fetch_request", r, v);
        }
        for (int v : new int[] {1, 7}) {
            OffsetFetchResponseData r = new OffsetFetchResponseData();
            if (v >= 3) r.setThrottleTimeMs(0);
            if (v >= 2) r.setErrorCode((short) 0);
            OffsetFetchResponseData.OffsetFetchResponseTopic t = new OffsetFetchResponseData.OffsetFetchResponseTopic().setName("orders");
            OffsetFetchResponseData.OffsetFetchResponsePartition p0 = new OffsetFetchResponseData.OffsetFetchResponsePartition().setPartitionIndex(0).setCommittedOffset(1234).setMetadata("").setErrorCode((short) 0);
            if (v >= 5) p0.setCommittedLeaderEpoch(4);
            t.partitions().add(p0);
            t.partitions().add(new OffsetFetchResponseData.OffsetFetchResponsePartition().setPartitionIndex(1).setCommittedOffset(-1).setMetadata(null).setErrorCode((short) 0));
            r.topics().add(t);
            emit("offset_fetch_response", r, v);
        }
        for (int v : new int[] {8, 10}) {
            OffsetFetchResponseData r = new OffsetFetchResponseData().setThrottleTimeMs(0);
            OffsetFetchResponseData.OffsetFetchResponseGroup g1 = new OffsetFetchResponseData.OffsetFetchResponseGroup().setGroupId("group-1").setErrorCode((short) 0);
            OffsetFetchResponseData.OffsetFetchResponseTopics t = new OffsetFetchResponseData.OffsetFetchResponseTopics();
            if (v >= 10) t.setTopicId(TOPIC_A); else t.setName("orders");
            t.partitions().add(new OffsetFetchResponseData.OffsetFetchResponsePartitions().setPartitionIndex(0).setCommittedOffset(1234).setCommittedLeaderEpoch(4).setMetadata(null).setErrorCode((short) 0));
            g1.topics().add(t);
            r.groups().add(g1);
            r.groups().add(new OffsetFetchResponseData.OffsetFetchResponseGroup().setGroupId("group-2").setErrorCode((short) 16));
            emit("offset_fetch_response", r, v);
        }

        // ListOffsets
        for (int v : new int[] {1, 5, 10}) {
            ListOffsetsRequestData r = new ListOffsetsRequestData().setReplicaId(-1);
            if (v >= 2) r.setIsolationLevel((byte) 1);
            if (v >= 10) r.setTimeoutMs(30000);
            ListOffsetsRequestData.ListOffsetsTopic t = new ListOffsetsRequestData.ListOffsetsTopic().setName("orders");
            ListOffsetsRequestData.ListOffsetsPartition p0 = new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(-1);
            if (v >= 4) p0.setCurrentLeaderEpoch(5);
            t.partitions().add(p0);
            t.partitions().add(new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(1).setTimestamp(-2));
            r.topics().add(t);
            emit("list_offsets_request", r, v);
        }
        for (int v : new int[] {1, 5, 10}) {
            ListOffsetsResponseData r = new ListOffsetsResponseData();
            if (v >= 2) r.setThrottleTimeMs(0);
            ListOffsetsResponseData.ListOffsetsTopicResponse t = new ListOffsetsResponseData.ListOffsetsTopicResponse().setName("orders");
            ListOffsetsResponseData.ListOffsetsPartitionResponse p0 = new ListOffsetsResponseData.ListOffsetsPartitionResponse().setPartitionIndex(0).setErrorCode((short) 0).setTimestamp(-1).setOffset(4242);
            if (v >= 4) p0.setLeaderEpoch(5);
            t.partitions().add(p0);
            t.partitions().add(new ListOffsetsResponseData.ListOffsetsPartitionResponse().setPartitionIndex(1).setErrorCode((short) 6));
            r.topics().add(t);
            emit("list_offsets_response", r, v);
        }

        // Fetch
        for (int v : new int[] {4, 11, 13, 15, 18}) {
            FetchRequestData r = new FetchRequestData().setMaxWaitMs(500).setMinBytes(1);
            if (v <= 14) r.setReplicaId(-1);
            if (v >= 15) r.setReplicaState(new FetchRequestData.ReplicaState().setReplicaId(-1).setReplicaEpoch(-1));
            if (v >= 12) r.setClusterId(v == 18 ? "cluster-xyz" : null);
            r.setMaxBytes(52428800).setIsolationLevel((byte) 1);
            if (v >= 7) r.setSessionId(v >= 13 ? 77 : 0).setSessionEpoch(v >= 13 ? 3 : -1);
            FetchRequestData.FetchTopic t = new FetchRequestData.FetchTopic();
            if (v >= 13) t.setTopicId(TOPIC_A); else t.setTopic("orders");
            FetchRequestData.FetchPartition p0 = new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(100).setPartitionMaxBytes(1048576);
            if (v >= 9) p0.setCurrentLeaderEpoch(5);
            if (v >= 12) p0.setLastFetchedEpoch(4);
            if (v >= 5) p0.setLogStartOffset(-1);
            if (v >= 17) p0.setReplicaDirectoryId(TOPIC_B);
            if (v >= 18) p0.setHighWatermark(90);
            t.partitions().add(p0);
            t.partitions().add(new FetchRequestData.FetchPartition().setPartition(1).setFetchOffset(0).setPartitionMaxBytes(1048576));
            r.topics().add(t);
            if (v >= 7) {
                FetchRequestData.ForgottenTopic f = new FetchRequestData.ForgottenTopic().setPartitions(Arrays.asList(3, 4));
                if (v >= 13) f.setTopicId(TOPIC_B); else f.setTopic("payments");
                r.forgottenTopicsData().add(f);
            }
            if (v >= 11) r.setRackId("rack-a");
            emit("fetch_request", r, v);
        }
        for (int v : new int[] {4, 11, 13, 16}) {
            FetchResponseData r = new FetchResponseData();
            r.setThrottleTimeMs(0);
            if (v >= 7) r.setErrorCode((short) 0).setSessionId(77);
            FetchResponseData.FetchableTopicResponse t = new FetchResponseData.FetchableTopicResponse();
            if (v >= 13) t.setTopicId(TOPIC_A); else t.setTopic("orders");
            FetchResponseData.PartitionData p0 = new FetchResponseData.PartitionData().setPartitionIndex(0).setErrorCode((short) 0)
                .setHighWatermark(200).setLastStableOffset(150);
            if (v >= 5) p0.setLogStartOffset(0);
            List<FetchResponseData.AbortedTransaction> aborted = new ArrayList<>();
            aborted.add(new FetchResponseData.AbortedTransaction().setProducerId(9001).setFirstOffset(120));
            p0.setAbortedTransactions(aborted);
            if (v >= 11) p0.setPreferredReadReplica(-1);
            p0.setRecords(MemoryRecords.readableRecords(ByteBuffer.wrap(bytes(0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 3, 1, 2, 3))));
            t.partitions().add(p0);
            FetchResponseData.PartitionData p1 = new FetchResponseData.PartitionData().setPartitionIndex(1).setErrorCode((short) 6)
                .setHighWatermark(-1).setAbortedTransactions(null).setRecords(null);
            if (v >= 11) p1.setPreferredReadReplica(2);
            if (v >= 12) {
                p1.setCurrentLeader(new FetchResponseData.LeaderIdAndEpoch().setLeaderId(2).setLeaderEpoch(6));
                p1.setDivergingEpoch(new FetchResponseData.EpochEndOffset().setEpoch(3).setEndOffset(88));
            }
            t.partitions().add(p1);
            r.responses().add(t);
            if (v >= 16) {
                r.nodeEndpoints().add(new FetchResponseData.NodeEndpoint().setNodeId(2).setHost("broker-2").setPort(9093).setRack(null));
            }
            emit("fetch_response", r, v);
        }

        // ConsumerGroupHeartbeat (KIP-848): a join (epoch 0, every field said), a steady-state
        // heartbeat acknowledging an assignment (nulls: nothing changed), a leave (epoch -1).
        for (int v : new int[] {0, 1}) {
            ConsumerGroupHeartbeatRequestData r = new ConsumerGroupHeartbeatRequestData().setGroupId("group-1")
                .setMemberId("member-a").setMemberEpoch(0).setInstanceId("instance-1").setRackId("rack-a")
                .setRebalanceTimeoutMs(300000).setSubscribedTopicNames(Arrays.asList("orders", "payments"))
                .setServerAssignor("uniform").setTopicPartitions(new ArrayList<>());
            if (v >= 1) r.setSubscribedTopicRegex("orders-.*");
            emit("consumer_group_heartbeat_request", r, v);
        }
        {
            ConsumerGroupHeartbeatRequestData r = new ConsumerGroupHeartbeatRequestData().setGroupId("group-1")
                .setMemberId("member-a").setMemberEpoch(7);
            r.setTopicPartitions(new ArrayList<>(Arrays.asList(
                new ConsumerGroupHeartbeatRequestData.TopicPartitions().setTopicId(TOPIC_A).setPartitions(Arrays.asList(0, 2)),
                new ConsumerGroupHeartbeatRequestData.TopicPartitions().setTopicId(TOPIC_B).setPartitions(new ArrayList<>()))));
            emit("consumer_group_heartbeat_request_ack", r, 1);
            emit("consumer_group_heartbeat_request_leave", new ConsumerGroupHeartbeatRequestData().setGroupId("group-1")
                .setMemberId("member-a").setMemberEpoch(-1).setInstanceId(null), 1);
        }
        for (int v : new int[] {0, 1}) {
            ConsumerGroupHeartbeatResponseData.Assignment a = new ConsumerGroupHeartbeatResponseData.Assignment();
            a.topicPartitions().add(new ConsumerGroupHeartbeatResponseData.TopicPartitions().setTopicId(TOPIC_A).setPartitions(Arrays.asList(0, 2)));
            a.topicPartitions().add(new ConsumerGroupHeartbeatResponseData.TopicPartitions().setTopicId(TOPIC_B).setPartitions(Arrays.asList(1)));
            ConsumerGroupHeartbeatResponseData r = new ConsumerGroupHeartbeatResponseData().setThrottleTimeMs(0)
                .setErrorCode((short) 0).setMemberId("member-a").setMemberEpoch(7).setHeartbeatIntervalMs(5000)
                .setAssignment(a);
            if (v >= 1) r.unknownTaggedFields().add(new RawTaggedField(5, bytes(0xca, 0xfe)));
            emit("consumer_group_heartbeat_response", r, v);
        }
        emit("consumer_group_heartbeat_response_fenced", new ConsumerGroupHeartbeatResponseData().setThrottleTimeMs(3)
            .setErrorCode((short) 110).setErrorMessage("The member epoch is fenced.").setMemberId(null)
            .setMemberEpoch(-1).setHeartbeatIntervalMs(0).setAssignment(null), 1);

        // ConsumerGroupDescribe
        for (int v : new int[] {0, 1}) {
            emit("consumer_group_describe_request", new ConsumerGroupDescribeRequestData()
                .setGroupIds(Arrays.asList("group-1", "group-2")).setIncludeAuthorizedOperations(true), v);
        }
        for (int v : new int[] {0, 1}) {
            ConsumerGroupDescribeResponseData.Assignment current = new ConsumerGroupDescribeResponseData.Assignment();
            current.topicPartitions().add(new ConsumerGroupDescribeResponseData.TopicPartitions().setTopicId(TOPIC_A)
                .setTopicName("orders").setPartitions(Arrays.asList(0, 2)));
            ConsumerGroupDescribeResponseData.Assignment target = new ConsumerGroupDescribeResponseData.Assignment();
            target.topicPartitions().add(new ConsumerGroupDescribeResponseData.TopicPartitions().setTopicId(TOPIC_A)
                .setTopicName("orders").setPartitions(Arrays.asList(0, 1, 2)));
            ConsumerGroupDescribeResponseData.Member m = new ConsumerGroupDescribeResponseData.Member().setMemberId("member-a")
                .setInstanceId("instance-1").setRackId(null).setMemberEpoch(7).setClientId("client-1").setClientHost("/127.0.0.1")
                .setSubscribedTopicNames(Arrays.asList("orders")).setSubscribedTopicRegex(null)
                .setAssignment(current).setTargetAssignment(target);
            if (v >= 1) m.setMemberType((byte) 1);
            ConsumerGroupDescribeResponseData.DescribedGroup g = new ConsumerGroupDescribeResponseData.DescribedGroup()
                .setErrorCode((short) 0).setGroupId("group-1").setGroupState("Reconciling").setGroupEpoch(8)
                .setAssignmentEpoch(8).setAssignorName("uniform").setAuthorizedOperations(0x0fe8);
            g.members().add(m);
            ConsumerGroupDescribeResponseData r = new ConsumerGroupDescribeResponseData().setThrottleTimeMs(0);
            r.groups().add(g);
            r.groups().add(new ConsumerGroupDescribeResponseData.DescribedGroup().setErrorCode((short) 69)
                .setErrorMessage("Group group-2 not found.").setGroupId("group-2").setGroupState("Dead"));
            emit("consumer_group_describe_response", r, v);
        }

        System.out.println("wrote " + count + " golden files to " + out);
    }
}
