// Command mooring-kfake serves Mooring's fault-injection tests: it runs franz-go's kfake (a Kafka
// broker written by others, with real classic groups, static membership and KIP-394) on loopback
// ports, seeds topics, and takes injection commands from the test on stdin, one JSON object a
// line:
//
//	{"id":1,"cmd":"fault","key":12,"err":16,"count":1,"group":"g","member":"m","topic":"t","partitions":[0],"top_level":false}
//	    the next `count` requests of API `key` (matching the optional selectors) are answered
//	    with error `err`, by kfake's own Fault (at the top level, or per group/partition as the
//	    API's response has it); `member` matches the request's member id, `epoch` (optional)
//	    a ConsumerGroupHeartbeat's member epoch (-1 or -2: its leave)
//	{"id":2,"cmd":"stall","key":14,"ms":3000,"count":1,"member":"m"}
//	    the next `count` such requests wait `ms` before kfake handles them (kfake's SleepControl:
//	    only that connection waits)
//	{"id":3,"cmd":"drop","key":12,"count":1,"with_records":false}
//	    the next `count` responses of API `key` are cut: half the frame is written, then the
//	    connection is closed (kfake has applied the request); `with_records` (Fetch): only
//	    responses carrying records
//	{"id":4,"cmd":"produce","topic":"t","partition":0,"count":10}
//	    produces `count` records with acks=all; the reply lists the acknowledged offsets
//	{"id":5,"cmd":"commit","group":"g","topic":"t","partition":0,"offset":5}
//	    commits an offset for a group with no members (generation -1)
//	{"id":6,"cmd":"group_config","group":"g","configs":{"share.auto.offset.reset":"earliest"}}
//	    sets dynamic configs of a group, before or after it exists (kfake's SetGroupConfigs)
//
// Every command is answered with {"ev":"reply","id":N,...}. Everything the clients under test
// send and receive is reported on stdout as JSON lines too ({"ev":"req",...}, {"ev":"resp",...},
// {"ev":"dropped",...}, {"ev":"stalled",...}; see observe.go), so a test can check which requests
// followed an injected error, and when. The first line is {"ev":"ready","brokers":[...]}.
//
// Flags: -brokers N, -min-session-ms MS, -topic name:partitions (repeatable), -broker-config
// key=value (repeatable: a broker config kfake takes, e.g. group.consumer.heartbeat.interval.ms).
//
// The program exits when stdin closes: a test process that dies takes it along.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// harnessClientID is the client id of this program's own client (produce, commit); its requests
// are neither reported nor dropped nor stalled.
const harnessClientID = "mooring-kfake-harness"

type topicFlag map[string]int32

func (f topicFlag) String() string { return fmt.Sprint(map[string]int32(f)) }

func (f topicFlag) Set(s string) error {
	name, parts, ok := strings.Cut(s, ":")
	if !ok || name == "" {
		return fmt.Errorf("expected name:partitions, got %q", s)
	}
	n, err := strconv.Atoi(parts)
	if err != nil || n < 1 {
		return fmt.Errorf("bad partition count in %q", s)
	}
	f[name] = int32(n)
	return nil
}

// command is one line of stdin; which fields matter depends on cmd.
type command struct {
	ID         int64             `json:"id"`
	Cmd        string            `json:"cmd"`
	Key        int16             `json:"key"`
	Err        int16             `json:"err"`
	Count      int               `json:"count"`
	Group      string            `json:"group"`
	Member     *string           `json:"member"`
	Epoch      *int32            `json:"epoch"`
	Topic      string            `json:"topic"`
	Partitions []int32           `json:"partitions"`
	TopLevel   bool              `json:"top_level"`
	Records    bool              `json:"with_records"`
	Ms         int               `json:"ms"`
	Partition  int32             `json:"partition"`
	Offset     int64             `json:"offset"`
	Configs    map[string]string `json:"configs"`
}

type harness struct {
	cluster *kfake.Cluster
	client  *kgo.Client
	obs     *observer
}

// configFlag collects repeated -broker-config key=value flags.
type configFlag map[string]string

func (f configFlag) String() string { return fmt.Sprint(map[string]string(f)) }

func (f configFlag) Set(s string) error {
	key, value, ok := strings.Cut(s, "=")
	if !ok || key == "" {
		return fmt.Errorf("expected key=value, got %q", s)
	}
	f[key] = value
	return nil
}

func main() {
	topics := make(topicFlag)
	configs := make(configFlag)
	brokers := flag.Int("brokers", 1, "number of brokers")
	minSession := flag.Int("min-session-ms", 100, "group.min.session.timeout.ms")
	flag.Var(topics, "topic", "topic to seed, name:partitions (repeatable)")
	flag.Var(configs, "broker-config", "a broker config kfake takes, key=value (repeatable), e.g. group.consumer.heartbeat.interval.ms=1000")
	flag.Parse()

	obs := newObserver(os.Stdout)
	opts := []kfake.Opt{
		kfake.NumBrokers(*brokers),
		kfake.GroupMinSessionTimeout(time.Duration(*minSession) * time.Millisecond),
		kfake.ListenFn(obs.listen), // loopback only: kfake listens on 127.0.0.1:<port>
	}
	for name, parts := range topics {
		opts = append(opts, kfake.SeedTopics(parts, name))
	}
	if len(configs) > 0 {
		opts = append(opts, kfake.BrokerConfigs(configs))
	}
	cluster, err := kfake.NewCluster(opts...)
	if err != nil {
		fail("starting kfake: %v", err)
	}
	addrs := cluster.ListenAddrs()
	client, err := kgo.NewClient(
		kgo.SeedBrokers(addrs...),
		kgo.ClientID(harnessClientID),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()),
	)
	if err != nil {
		fail("starting the producer: %v", err)
	}
	if err := obs.learnTopicIDs(client); err != nil {
		fail("reading topic ids: %v", err)
	}
	h := &harness{cluster: cluster, client: client, obs: obs}
	obs.emit(map[string]any{"ev": "ready", "brokers": addrs})

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		h.close()
		os.Exit(0)
	}()
	h.serve(os.Stdin)
	// Stdin closed: the test is gone.
	h.close()
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "mooring-kfake: "+format+"\n", args...)
	os.Exit(1)
}

func (h *harness) close() {
	h.client.Close()
	h.cluster.Close()
}

func (h *harness) serve(in *os.File) {
	lines := bufio.NewScanner(in)
	lines.Buffer(make([]byte, 64*1024), 1024*1024)
	for lines.Scan() {
		var cmd command
		if err := json.Unmarshal(lines.Bytes(), &cmd); err != nil {
			h.obs.emit(map[string]any{"ev": "reply", "id": -1, "error": fmt.Sprintf("bad command %q: %v", lines.Text(), err)})
			continue
		}
		// Produce and commit wait on the cluster, which is busy answering the clients under test
		// meanwhile; other commands are quick. Each reply names its command's id.
		go func() {
			reply, err := h.run(cmd)
			if reply == nil {
				reply = map[string]any{}
			}
			reply["ev"] = "reply"
			reply["id"] = cmd.ID
			if err != nil {
				reply["error"] = err.Error()
			}
			h.obs.emit(reply)
		}()
	}
}

func (h *harness) run(cmd command) (map[string]any, error) {
	switch cmd.Cmd {
	case "fault":
		return nil, h.fault(cmd)
	case "stall":
		h.stall(cmd)
		return nil, nil
	case "drop":
		h.obs.dropNext(cmd.Key, max(cmd.Count, 1), cmd.Records)
		return nil, nil
	case "produce":
		return h.produce(cmd)
	case "commit":
		return nil, h.commit(cmd)
	case "group_config":
		h.cluster.SetGroupConfigs(cmd.Group, cmd.Configs)
		return nil, nil
	default:
		return nil, fmt.Errorf("unknown command %q", cmd.Cmd)
	}
}

func (h *harness) fault(cmd command) error {
	e, ok := kerr.ErrorForCode(cmd.Err).(*kerr.Error)
	if !ok {
		return fmt.Errorf("unknown error code %d", cmd.Err)
	}
	f := kfake.Fault{
		Keys:       []kmsg.Key{kmsg.Key(cmd.Key)},
		Group:      cmd.Group,
		Topic:      cmd.Topic,
		Partitions: cmd.Partitions,
		TopLevel:   cmd.TopLevel,
		Err:        e,
		Count:      max(cmd.Count, 1),
	}
	if cmd.Member != nil || cmd.Epoch != nil {
		member, epoch := cmd.Member, cmd.Epoch
		f.When = func(req kmsg.Request) bool {
			if member != nil && memberID(req) != *member {
				return false
			}
			if epoch != nil {
				e, ok := memberEpoch(req)
				return ok && e == *epoch
			}
			return true
		}
	}
	h.cluster.Fault(f)
	return nil
}

// stall holds the next cmd.Count matching requests of cmd.Key for cmd.Ms before kfake handles
// them. SleepControl parks only the connection the request came on.
func (h *harness) stall(cmd command) {
	var mu sync.Mutex
	left := max(cmd.Count, 1)
	pause := time.Duration(cmd.Ms) * time.Millisecond
	h.cluster.ControlKey(cmd.Key, func(req kmsg.Request) (kmsg.Response, error, bool) {
		h.cluster.KeepControl()
		if cmd.Member != nil && memberID(req) != *cmd.Member {
			return nil, nil, false
		}
		mu.Lock()
		take := left > 0
		if take {
			left--
		}
		if left == 0 {
			h.cluster.DropControl()
		}
		mu.Unlock()
		if !take {
			return nil, nil, false
		}
		h.obs.emit(map[string]any{"ev": "stalled", "t": micros(), "key": cmd.Key, "api": kmsg.NameForKey(cmd.Key), "ms": cmd.Ms, "member": memberID(req)})
		h.cluster.SleepControl(func() { time.Sleep(pause) })
		h.obs.emit(map[string]any{"ev": "resumed", "t": micros(), "key": cmd.Key, "api": kmsg.NameForKey(cmd.Key), "member": memberID(req)})
		return nil, nil, false // kfake handles it now
	})
}

func (h *harness) produce(cmd command) (map[string]any, error) {
	records := make([]*kgo.Record, 0, cmd.Count)
	for i := 0; i < cmd.Count; i++ {
		records = append(records, &kgo.Record{
			Topic:     cmd.Topic,
			Partition: cmd.Partition,
			Value:     []byte(fmt.Sprintf("%s-%d-%d", cmd.Topic, cmd.Partition, i)),
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	results := h.client.ProduceSync(ctx, records...)
	offsets := make([]int64, 0, len(results))
	for _, r := range results {
		if r.Err != nil {
			return nil, fmt.Errorf("produce to %s-%d: %w", cmd.Topic, cmd.Partition, r.Err)
		}
		offsets = append(offsets, r.Record.Offset)
	}
	return map[string]any{"offsets": offsets}, nil
}

func (h *harness) commit(cmd command) error {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group = cmd.Group
	req.Generation = -1
	t := kmsg.NewOffsetCommitRequestTopic()
	t.Topic = cmd.Topic
	t.TopicID = h.obs.topicID(cmd.Topic) // v10+ names topics by id
	p := kmsg.NewOffsetCommitRequestTopicPartition()
	p.Partition = cmd.Partition
	p.Offset = cmd.Offset
	p.LeaderEpoch = -1
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, h.client)
	if err != nil {
		return err
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				return fmt.Errorf("commit %s-%d: %w", cmd.Topic, rp.Partition, err)
			}
		}
	}
	return nil
}

// memberID is the member id a group request carries ("" if none); a share session request
// (ShareFetch, ShareAcknowledge) carries it as a nullable string.
func memberID(req kmsg.Request) string {
	v := reflect.ValueOf(req)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return ""
	}
	f := v.Elem().FieldByName("MemberID")
	if f.IsValid() && f.Kind() == reflect.Pointer && !f.IsNil() {
		f = f.Elem()
	}
	if !f.IsValid() || f.Kind() != reflect.String {
		return ""
	}
	return f.String()
}

// memberEpoch is the member epoch a consumer-protocol request carries (ConsumerGroupHeartbeat:
// -1 or -2 for a leave), if it has one.
func memberEpoch(req kmsg.Request) (int32, bool) {
	v := reflect.ValueOf(req)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return 0, false
	}
	f := v.Elem().FieldByName("MemberEpoch")
	if !f.IsValid() || f.Kind() != reflect.Int32 {
		return 0, false
	}
	return int32(f.Int()), true
}

func micros() int64 { return time.Now().UnixMicro() }

var errDropped = errors.New("mooring-kfake: response dropped mid-frame")
