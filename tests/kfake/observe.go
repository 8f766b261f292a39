package main

// What the clients under test send and receive, seen from the broker's side of the socket:
// kfake's listeners are wrapped (kfake.ListenFn) so every request frame read and every response
// frame written is decoded with kmsg and reported as a JSON line, and a response can be cut in
// the middle of its frame. kfake answers a connection's requests one at a time and writes each
// response with a single Write, so one Write is one whole frame.

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type observer struct {
	outMu sync.Mutex
	out   *json.Encoder

	nodes   atomic.Int32 // listeners made so far: kfake makes broker i's listener i-th
	conns   atomic.Int64
	topicMu sync.RWMutex
	names   map[[16]byte]string

	dropMu sync.Mutex
	drops  map[int16]*drop // API key → responses still to cut
}

type drop struct {
	left        int
	withRecords bool // Fetch only: cut only a response carrying records
}

func newObserver(w io.Writer) *observer {
	return &observer{
		out:   json.NewEncoder(w),
		names: make(map[[16]byte]string),
		drops: make(map[int16]*drop),
	}
}

func (o *observer) emit(v map[string]any) {
	o.outMu.Lock()
	defer o.outMu.Unlock()
	_ = o.out.Encode(v) // stdout gone means the test is gone; stdin's EOF ends us
}

func (o *observer) listen(network, address string) (net.Listener, error) {
	ln, err := net.Listen(network, address)
	if err != nil {
		return nil, err
	}
	return &listener{Listener: ln, obs: o, node: o.nodes.Add(1) - 1}, nil
}

// learnTopicIDs maps the seeded topics' ids to names, for requests that name topics by id.
func (o *observer) learnTopicIDs(client *kgo.Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, client)
	if err != nil {
		return err
	}
	o.topicMu.Lock()
	defer o.topicMu.Unlock()
	for _, t := range resp.Topics {
		if t.Topic != nil {
			o.names[t.TopicID] = *t.Topic
		}
	}
	return nil
}

// topicID is the id of a seeded topic (zero if unknown).
func (o *observer) topicID(name string) [16]byte {
	o.topicMu.RLock()
	defer o.topicMu.RUnlock()
	for id, n := range o.names {
		if n == name {
			return id
		}
	}
	return [16]byte{}
}

// topic is the topic's name, from its id when the name is empty.
func (o *observer) topic(name string, id [16]byte) string {
	if name != "" {
		return name
	}
	o.topicMu.RLock()
	defer o.topicMu.RUnlock()
	if n, ok := o.names[id]; ok {
		return n
	}
	return hex.EncodeToString(id[:])
}

func (o *observer) dropNext(key int16, count int, withRecords bool) {
	o.dropMu.Lock()
	defer o.dropMu.Unlock()
	o.drops[key] = &drop{left: count, withRecords: withRecords}
}

// takeDrop reports whether to cut this response of API key (resp: decoded, or nil).
func (o *observer) takeDrop(key int16, resp kmsg.Response) bool {
	o.dropMu.Lock()
	defer o.dropMu.Unlock()
	d := o.drops[key]
	if d == nil || d.left == 0 {
		return false
	}
	if d.withRecords && !carriesRecords(resp) {
		return false
	}
	d.left--
	return true
}

func carriesRecords(resp kmsg.Response) bool {
	r, ok := resp.(*kmsg.FetchResponse)
	if !ok {
		return false
	}
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			if len(p.RecordBatches) > 0 {
				return true
			}
		}
	}
	return false
}

type listener struct {
	net.Listener
	obs  *observer
	node int32
}

func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &conn{Conn: c, obs: l.obs, node: l.node, id: l.obs.conns.Add(1), sent: make(map[int32]sent)}, nil
}

// sent is what the response to a correlation id answers.
type sent struct {
	key, version int16
	client       string
}

type conn struct {
	net.Conn
	obs  *observer
	node int32
	id   int64

	pending []byte // request bytes read but not yet a whole frame (only Read touches it)

	mu   sync.Mutex
	sent map[int32]sent
}

func (c *conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.pending = append(c.pending, p[:n]...)
		for len(c.pending) >= 4 {
			size := int(binary.BigEndian.Uint32(c.pending))
			if len(c.pending) < 4+size {
				break
			}
			c.request(c.pending[4 : 4+size])
			c.pending = append([]byte(nil), c.pending[4+size:]...)
		}
	}
	return n, err
}

func (c *conn) request(frame []byte) {
	r := kbin.Reader{Src: frame}
	key, version, corr := r.Int16(), r.Int16(), r.Int32()
	clientID := r.NullableString()
	client := ""
	if clientID != nil {
		client = *clientID
	}
	c.mu.Lock()
	c.sent[corr] = sent{key: key, version: version, client: client}
	c.mu.Unlock()
	if client == harnessClientID {
		return
	}
	ev := map[string]any{"ev": "req", "t": micros(), "conn": c.id, "node": c.node, "client": client,
		"key": key, "api": kmsg.NameForKey(key), "v": version, "corr": corr}
	if req := kmsg.RequestForKey(key); req != nil {
		req.SetVersion(version)
		if req.IsFlexible() {
			kmsg.SkipTags(&r)
		}
		if err := req.ReadFrom(r.Src); err == nil {
			c.obs.describeRequest(req, ev)
		} else {
			ev["decode_error"] = err.Error()
		}
	}
	c.obs.emit(ev)
}

func (c *conn) Write(b []byte) (int, error) {
	if len(b) < 8 {
		return c.Conn.Write(b)
	}
	corr := int32(binary.BigEndian.Uint32(b[4:8]))
	c.mu.Lock()
	s, ok := c.sent[corr]
	delete(c.sent, corr)
	c.mu.Unlock()
	if !ok || s.client == harnessClientID {
		return c.Conn.Write(b)
	}
	ev := map[string]any{"ev": "resp", "t": micros(), "conn": c.id, "node": c.node, "client": s.client,
		"key": s.key, "api": kmsg.NameForKey(s.key), "v": s.version, "corr": corr}
	var decoded kmsg.Response
	if resp := kmsg.ResponseForKey(s.key); resp != nil {
		resp.SetVersion(s.version)
		r := kbin.Reader{Src: b[8:]}
		if resp.IsFlexible() && s.key != int16(kmsg.ApiVersions) {
			kmsg.SkipTags(&r)
		}
		if err := resp.ReadFrom(r.Src); err == nil {
			c.obs.describeResponse(resp, ev)
			decoded = resp
		} else {
			ev["decode_error"] = err.Error()
		}
	}
	if c.obs.takeDrop(s.key, decoded) {
		// Mid-response: the size prefix and part of the body, then the connection ends.
		part := len(b) / 2
		n, _ := c.Conn.Write(b[:part])
		_ = c.Conn.Close()
		ev["ev"] = "dropped"
		ev["wrote"] = n
		ev["of"] = len(b)
		c.obs.emit(ev)
		return n, errDropped
	}
	c.obs.emit(ev)
	return c.Conn.Write(b)
}

// describeRequest adds the fields a test checks to ev.
func (o *observer) describeRequest(req kmsg.Request, ev map[string]any) {
	switch r := req.(type) {
	case *kmsg.JoinGroupRequest:
		ev["group"], ev["member"], ev["instance"] = r.Group, r.MemberID, r.InstanceID
		var protocols []string
		for _, p := range r.Protocols {
			protocols = append(protocols, p.Name)
		}
		ev["protocols"] = protocols
		// A consumer's subscription (its first protocol's): the generation it says it owned its
		// partitions in (v2+, KIP-792) and how many it owns (v1+, KIP-429), so a test can tell a
		// rejoin that kept its generation from one that reset it.
		if r.ProtocolType == "consumer" && len(r.Protocols) > 0 {
			var sub kmsg.ConsumerMemberMetadata
			if err := sub.ReadFrom(r.Protocols[0].Metadata); err == nil {
				owned := 0
				for _, t := range sub.OwnedPartitions {
					owned += len(t.Partitions)
				}
				ev["sub_gen"], ev["owned"] = sub.Generation, owned
			}
		}
	case *kmsg.SyncGroupRequest:
		ev["group"], ev["member"], ev["gen"], ev["instance"] = r.Group, r.MemberID, r.Generation, r.InstanceID
		ev["assignments"] = len(r.GroupAssignment)
	case *kmsg.HeartbeatRequest:
		ev["group"], ev["member"], ev["gen"], ev["instance"] = r.Group, r.MemberID, r.Generation, r.InstanceID
	case *kmsg.LeaveGroupRequest:
		ev["group"], ev["member"] = r.Group, r.MemberID
		var members []string
		for _, m := range r.Members {
			members = append(members, m.MemberID)
		}
		ev["members"] = members
	case *kmsg.OffsetCommitRequest:
		ev["group"], ev["member"], ev["gen"], ev["instance"] = r.Group, r.MemberID, r.Generation, r.InstanceID
		var offsets [][]any
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				offsets = append(offsets, []any{o.topic(t.Topic, t.TopicID), p.Partition, p.Offset})
			}
		}
		ev["offsets"] = offsets
	case *kmsg.OffsetFetchRequest:
		groups := []string{}
		if r.Group != "" {
			groups = append(groups, r.Group)
		}
		for _, g := range r.Groups {
			groups = append(groups, g.Group)
		}
		ev["groups"] = groups
	case *kmsg.FindCoordinatorRequest:
		keys := append([]string(nil), r.CoordinatorKeys...)
		if r.CoordinatorKey != "" {
			keys = append(keys, r.CoordinatorKey)
		}
		ev["keys"], ev["type"] = keys, r.CoordinatorType
	case *kmsg.FetchRequest:
		ev["session"], ev["epoch"] = r.SessionID, r.SessionEpoch
		var parts [][]any
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				parts = append(parts, []any{o.topic(t.Topic, t.TopicID), p.Partition, p.FetchOffset, p.CurrentLeaderEpoch})
			}
		}
		var forgotten [][]any
		for _, t := range r.ForgottenTopics {
			for _, p := range t.Partitions {
				forgotten = append(forgotten, []any{o.topic(t.Topic, t.TopicID), p})
			}
		}
		ev["partitions"], ev["forgotten"] = parts, forgotten
	case *kmsg.ConsumerGroupHeartbeatRequest:
		// A full heartbeat carries the subscription and the owned partitions; an incremental one
		// leaves them null ("topics", "owned" absent from the line means null).
		ev["group"], ev["member"], ev["epoch"], ev["instance"] = r.Group, r.MemberID, r.MemberEpoch, r.InstanceID
		if r.SubscribedTopicNames != nil {
			ev["topics"] = r.SubscribedTopicNames
		}
		if r.Topics != nil {
			owned := 0
			for _, t := range r.Topics {
				owned += len(t.Partitions)
			}
			ev["owned"] = owned
		}
	case *kmsg.ShareGroupHeartbeatRequest:
		// As ConsumerGroupHeartbeat's: "topics" absent means null (unchanged).
		ev["group"], ev["member"], ev["epoch"] = r.GroupID, r.MemberID, r.MemberEpoch
		if r.SubscribedTopicNames != nil {
			ev["topics"] = r.SubscribedTopicNames
		}
	case *kmsg.ShareFetchRequest:
		ev["share_epoch"], ev["max_records"], ev["renew"] = r.ShareSessionEpoch, r.MaxRecords, r.IsRenewAck
		if r.MemberID != nil {
			ev["member"] = *r.MemberID
		}
		var parts, acks [][]any
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				parts = append(parts, []any{o.topic("", t.TopicID), p.Partition})
				for _, b := range p.AcknowledgementBatches {
					acks = append(acks, []any{o.topic("", t.TopicID), p.Partition, b.FirstOffset, b.LastOffset, b.AcknowledgeTypes})
				}
			}
		}
		var forgotten [][]any
		for _, t := range r.ForgottenTopicsData {
			for _, p := range t.Partitions {
				forgotten = append(forgotten, []any{o.topic("", t.TopicID), p})
			}
		}
		ev["partitions"], ev["acks"], ev["forgotten"] = parts, acks, forgotten
	case *kmsg.ShareAcknowledgeRequest:
		ev["share_epoch"], ev["renew"] = r.ShareSessionEpoch, r.IsRenewAck
		if r.MemberID != nil {
			ev["member"] = *r.MemberID
		}
		var acks [][]any
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				for _, b := range p.AcknowledgementBatches {
					acks = append(acks, []any{o.topic("", t.TopicID), p.Partition, b.FirstOffset, b.LastOffset, b.AcknowledgeTypes})
				}
			}
		}
		ev["acks"] = acks
	case *kmsg.MetadataRequest:
		var topics []string
		for _, t := range r.Topics {
			if t.Topic != nil {
				topics = append(topics, *t.Topic)
			} else {
				topics = append(topics, o.topic("", t.TopicID))
			}
		}
		ev["topics"] = topics // null: every topic
	}
}

// describeResponse adds the top-level error code ("err", absent for APIs without one) and the
// fields a test checks to ev.
func (o *observer) describeResponse(resp kmsg.Response, ev map[string]any) {
	if v := reflect.ValueOf(resp); v.Kind() == reflect.Pointer && !v.IsNil() {
		if code := v.Elem().FieldByName("ErrorCode"); code.IsValid() && code.Kind() == reflect.Int16 {
			ev["err"] = code.Int()
		}
	}
	// Per-entity error codes that are not 0, as [topic or group, partition, code].
	var errs [][]any
	switch r := resp.(type) {
	case *kmsg.JoinGroupResponse:
		ev["gen"], ev["member"], ev["leader"], ev["protocol"] = r.Generation, r.MemberID, r.LeaderID, r.Protocol
	case *kmsg.ConsumerGroupHeartbeatResponse:
		ev["epoch"], ev["interval"] = r.MemberEpoch, r.HeartbeatIntervalMillis
		if r.MemberID != nil {
			ev["member"] = *r.MemberID
		}
		if r.Assignment != nil {
			assigned := 0
			for _, t := range r.Assignment.Topics {
				assigned += len(t.Partitions)
			}
			ev["assigned"] = assigned
		}
	case *kmsg.ShareGroupHeartbeatResponse:
		ev["epoch"], ev["interval"] = r.MemberEpoch, r.HeartbeatIntervalMillis
		if r.Assignment != nil {
			assigned := 0
			for _, t := range r.Assignment.TopicPartitions {
				assigned += len(t.Partitions)
			}
			ev["assigned"] = assigned
		}
	case *kmsg.ShareFetchResponse:
		var acquired [][]any
		for _, t := range r.Topics {
			name := o.topic("", t.TopicID)
			for _, p := range t.Partitions {
				for _, a := range p.AcquiredRecords {
					acquired = append(acquired, []any{name, p.Partition, a.FirstOffset, a.LastOffset, a.DeliveryCount})
				}
				if p.ErrorCode != 0 {
					errs = append(errs, []any{name, p.Partition, p.ErrorCode})
				}
				if p.AcknowledgeErrorCode != 0 {
					errs = append(errs, []any{name, p.Partition, p.AcknowledgeErrorCode})
				}
			}
		}
		ev["acquired"] = acquired
	case *kmsg.ShareAcknowledgeResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					errs = append(errs, []any{o.topic("", t.TopicID), p.Partition, p.ErrorCode})
				}
			}
		}
	case *kmsg.FetchResponse:
		ev["session"] = r.SessionID
		var parts [][]any
		for _, t := range r.Topics {
			name := o.topic(t.Topic, t.TopicID)
			for _, p := range t.Partitions {
				parts = append(parts, []any{name, p.Partition, p.ErrorCode, p.HighWatermark, len(p.RecordBatches)})
				if p.ErrorCode != 0 {
					errs = append(errs, []any{name, p.Partition, p.ErrorCode})
				}
			}
		}
		ev["partitions"] = parts
	case *kmsg.OffsetCommitResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					errs = append(errs, []any{o.topic(t.Topic, t.TopicID), p.Partition, p.ErrorCode})
				}
			}
		}
	case *kmsg.OffsetFetchResponse:
		for _, g := range r.Groups {
			if g.ErrorCode != 0 {
				errs = append(errs, []any{g.Group, -1, g.ErrorCode})
			}
			for _, t := range g.Topics {
				for _, p := range t.Partitions {
					if p.ErrorCode != 0 {
						errs = append(errs, []any{o.topic(t.Topic, t.TopicID), p.Partition, p.ErrorCode})
					}
				}
			}
		}
	case *kmsg.FindCoordinatorResponse:
		for _, c := range r.Coordinators {
			if c.ErrorCode != 0 {
				errs = append(errs, []any{c.Key, -1, c.ErrorCode})
			}
		}
	}
	if errs != nil {
		ev["errs"] = errs
	}
}
