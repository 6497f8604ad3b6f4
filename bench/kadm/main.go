// kadm-bench: kdp's record commands written the obvious way on franz-go's
// kadm (and kgo where kadm has no call), printing the JSON kdp prints, as a
// benchmark peer (scripts/bench-kadm.sh, docs/PERFORMANCE.md).
//
//	kadm-bench -bootstrap-server HOST:PORT COMMAND [ARGS]
//
// Commands, each the equivalent of a kdp command:
//
//	describe-json          kdp describe --output json
//	describe-jsonl         kdp describe --output jsonl
//	transactions-list      kdp transactions list --output json
//	transactions-describe  kdp transactions describe --transactional-id ID... --output json (IDs as arguments)
//	find-hanging           kdp find-hanging --output json
//	compare-replicas       kdp compare-replicas --output json
//	blocked                kdp blocked --output json (exit 4 when a group is blocked, as kdp)
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func main() {
	bootstrap := flag.String("bootstrap-server", "", "brokers to bootstrap from, comma-separated")
	timeout := flag.Duration("timeout", 120*time.Second, "the whole command's deadline")
	flag.Parse()
	if *bootstrap == "" || flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: kadm-bench -bootstrap-server HOST:PORT COMMAND [ARGS]")
		os.Exit(2)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(*bootstrap, ",")...))
	if err != nil {
		fail(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	switch flag.Arg(0) {
	case "describe-json":
		err = describeJSON(ctx, adm, out)
	case "describe-jsonl":
		err = describeJSONL(ctx, adm, out)
	case "transactions-list":
		err = transactionsList(ctx, adm, out)
	case "transactions-describe":
		err = transactionsDescribe(ctx, adm, out, flag.Args()[1:])
	case "find-hanging":
		err = findHanging(ctx, adm, out)
	case "compare-replicas":
		err = compareReplicas(ctx, cl, adm, out)
	case "blocked":
		err = blocked(ctx, adm, out, *bootstrap)
	default:
		err = fmt.Errorf("unknown command %q", flag.Arg(0))
	}
	found := errors.Is(err, errFound)
	if err == nil || found {
		err = out.Flush()
	}
	if err != nil {
		fail(err)
	}
	if found {
		cl.Close()
		os.Exit(4)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "kadm-bench:", err)
	os.Exit(1)
}

// writeDoc writes v pretty-printed as serde_json does (two spaces, no HTML
// escapes), then a newline.
func writeDoc(out *bufio.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// rfc3339 is kdp's time format; nil for an unknown time (0 or below).
func rfc3339(ms int64) *string {
	if ms <= 0 {
		return nil
	}
	s := time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
	return &s
}

func known(ms int64) *int64 {
	if ms <= 0 {
		return nil
	}
	return &ms
}

func errorCode(err error) int16 {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	if err != nil {
		return -1
	}
	return 0
}

type producerJSON struct {
	ProducerId            int64
	ProducerEpoch         int32
	LastSequence          int32
	LastTimestamp         int64
	CoordinatorEpoch      int32
	CurrentTxnStartOffset int64
}

type partitionJSON struct {
	PartitionIndex  int32
	ErrorCode       int16
	ErrorMessage    *string
	ActiveProducers []producerJSON
}

type topicJSON struct {
	Name       string
	Partitions []partitionJSON
}

type describeDoc struct {
	ThrottleTimeMs int32
	Topics         []topicJSON
}

// describeAll is kadm's DescribeProducers of every partition (Metadata,
// then one request per leader); a broker that failed fails the command.
func describeAll(ctx context.Context, adm *kadm.Client) (kadm.DescribedProducersTopics, error) {
	return adm.DescribeProducers(ctx, nil)
}

func describeJSON(ctx context.Context, adm *kadm.Client, out *bufio.Writer) error {
	ds, err := describeAll(ctx, adm)
	if err != nil {
		return err
	}
	doc := describeDoc{Topics: []topicJSON{}}
	for _, t := range ds.Sorted() {
		tj := topicJSON{Name: t.Topic, Partitions: []partitionJSON{}}
		for _, p := range t.Partitions.Sorted() {
			pj := partitionJSON{PartitionIndex: p.Partition, ErrorCode: errorCode(p.Err), ActiveProducers: []producerJSON{}}
			if p.ErrMessage != "" {
				m := p.ErrMessage
				pj.ErrorMessage = &m
			}
			for _, q := range p.ActiveProducers.Sorted() {
				pj.ActiveProducers = append(pj.ActiveProducers, producerJSON{
					ProducerId:            q.ProducerID,
					ProducerEpoch:         int32(q.ProducerEpoch),
					LastSequence:          q.LastSequence,
					LastTimestamp:         q.LastTimestamp,
					CoordinatorEpoch:      q.CoordinatorEpoch,
					CurrentTxnStartOffset: q.CurrentTxnStartOffset,
				})
			}
			tj.Partitions = append(tj.Partitions, pj)
		}
		doc.Topics = append(doc.Topics, tj)
	}
	return writeDoc(out, doc)
}

type producerLine struct {
	Topic                 string
	Partition             int32
	BrokerId              int32
	ProducerId            int64
	ProducerEpoch         int32
	LastSequence          int32
	LastTimestamp         int64
	LastTimestampRfc3339  *string
	CoordinatorEpoch      int32
	CurrentTxnStartOffset int64
}

func describeJSONL(ctx context.Context, adm *kadm.Client, out *bufio.Writer) error {
	ds, err := describeAll(ctx, adm)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for _, t := range ds {
		for _, p := range t.Partitions {
			for _, q := range p.ActiveProducers.Sorted() {
				if err := enc.Encode(producerLine{
					Topic:                 q.Topic,
					Partition:             q.Partition,
					BrokerId:              q.Leader,
					ProducerId:            q.ProducerID,
					ProducerEpoch:         int32(q.ProducerEpoch),
					LastSequence:          q.LastSequence,
					LastTimestamp:         q.LastTimestamp,
					LastTimestampRfc3339:  rfc3339(q.LastTimestamp),
					CoordinatorEpoch:      q.CoordinatorEpoch,
					CurrentTxnStartOffset: q.CurrentTxnStartOffset,
				}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

type listRow struct {
	TransactionalId               string
	Coordinator                   int32
	ProducerId                    int64
	TransactionState              string
	CurrentTransactionStartTimeMs *int64
	CurrentTransactionStartTime   *string
	TransactionDurationMs         *int64
}

func transactionsList(ctx context.Context, adm *kadm.Client, out *bufio.Writer) error {
	ls, err := adm.ListTransactions(ctx, nil, nil)
	if err != nil {
		return err
	}
	listed := ls.Sorted()
	ids := make([]string, 0, len(listed))
	for _, l := range listed {
		ids = append(ids, l.TxnID)
	}
	// ListTransactions has no start time: ask the coordinators, as kdp does
	ds, err := adm.DescribeTransactions(ctx, ids...)
	if err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	rows := make([]listRow, 0, len(listed))
	for _, l := range listed {
		r := listRow{TransactionalId: l.TxnID, Coordinator: l.Coordinator, ProducerId: l.ProducerID, TransactionState: l.State}
		if d, ok := ds[l.TxnID]; ok && d.Err == nil {
			if start := known(d.StartTimestamp); start != nil {
				dur := now - *start
				r.CurrentTransactionStartTimeMs, r.CurrentTransactionStartTime, r.TransactionDurationMs = start, rfc3339(*start), &dur
			}
		}
		rows = append(rows, r)
	}
	return writeDoc(out, map[string]any{"Transactions": rows})
}

type describeRow struct {
	CoordinatorId                 int32
	TransactionalId               string
	ProducerId                    int64
	ProducerEpoch                 int16
	TransactionState              string
	TransactionTimeoutMs          int32
	CurrentTransactionStartTimeMs *int64
	CurrentTransactionStartTime   *string
	TransactionDurationMs         *int64
	TopicPartitions               []string
}

func transactionsDescribe(ctx context.Context, adm *kadm.Client, out *bufio.Writer, ids []string) error {
	ds, err := adm.DescribeTransactions(ctx, ids...)
	if err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	rows := []describeRow{}
	failed := 0
	for _, d := range ds.Sorted() {
		if d.Err != nil {
			failed++
			fmt.Fprintf(os.Stderr, "kadm-bench: %s: %v\n", d.TxnID, d.Err)
			continue
		}
		r := describeRow{
			CoordinatorId: d.Coordinator, TransactionalId: d.TxnID, ProducerId: d.ProducerID,
			ProducerEpoch: d.ProducerEpoch, TransactionState: d.State, TransactionTimeoutMs: d.TimeoutMillis,
			TopicPartitions: []string{},
		}
		if start := known(d.StartTimestamp); start != nil {
			dur := now - *start
			r.CurrentTransactionStartTimeMs, r.CurrentTransactionStartTime, r.TransactionDurationMs = start, rfc3339(*start), &dur
		}
		for _, tp := range d.Topics.Sorted() {
			for _, p := range tp.Partitions {
				r.TopicPartitions = append(r.TopicPartitions, tp.Topic+"-"+strconv.Itoa(int(p)))
			}
		}
		rows = append(rows, r)
	}
	if err := writeDoc(out, map[string]any{"Transactions": rows}); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d transactional ids not described", failed)
	}
	return nil
}

type hangingRow struct {
	Topic                  string
	Partition              int32
	ProducerId             int64
	ProducerEpoch          int32
	CoordinatorEpoch       int32
	StartOffset            int64
	LastTimestamp          int64
	LastTimestampRfc3339   *string
	TransactionalId        *string
	CoordinatorState       *string
	TransactionStartTimeMs *int64
	TransactionAgeMs       *int64
	BlockedRecords         *int64
	BlockedGroups          []string
	Verdict                string
	Reason                 string
	KafkaSaysHanging       bool
}

// findHanging is kafka-transactions.sh find-hanging's rule on kadm: open
// transactions idle longer than the brokers' transaction.max.timeout.ms
// that no coordinator lists for the producer, or whose coordinator does not
// hold the partition; with the records each blocks (high watermark minus
// last stable offset) and, for the transaction holding a partition's LSO,
// the consumer groups whose committed offset is at it.
func findHanging(ctx context.Context, adm *kadm.Client, out *bufio.Writer) error {
	maxTimeout := int64(900_000)
	if cfgs, err := adm.DescribeBrokerConfigs(ctx); err == nil {
	configs:
		for _, rc := range cfgs {
			for _, c := range rc.Configs {
				if c.Key == "transaction.max.timeout.ms" && c.Value != nil {
					if n, err := strconv.ParseInt(*c.Value, 10, 64); err == nil {
						maxTimeout = n
						break configs
					}
				}
			}
		}
	}
	ds, err := describeAll(ctx, adm)
	if err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	var candidates []kadm.DescribedProducer
	// the first offset of each partition's earliest open transaction: its LSO holder
	holder := map[tp]int64{}
	ds.EachProducer(func(p kadm.DescribedProducer) {
		if p.CurrentTxnStartOffset >= 0 {
			k := tp{p.Topic, p.Partition}
			if h, ok := holder[k]; !ok || p.CurrentTxnStartOffset < h {
				holder[k] = p.CurrentTxnStartOffset
			}
		}
		if p.CurrentTxnStartOffset >= 0 && p.LastTimestamp > 0 && now-p.LastTimestamp > maxTimeout {
			candidates = append(candidates, p)
		}
	})
	rows := []hangingRow{}
	heldAt := map[int]int64{} // row -> the LSO it holds
	if len(candidates) > 0 {
		pids := make([]int64, 0, len(candidates))
		topics := map[string]bool{}
		for _, c := range candidates {
			pids = append(pids, c.ProducerID)
			topics[c.Topic] = true
		}
		listed, err := adm.ListTransactions(ctx, pids, nil)
		if err != nil {
			return err
		}
		byPid := map[int64]string{}
		ids := []string{}
		for _, l := range listed {
			byPid[l.ProducerID] = l.TxnID
			ids = append(ids, l.TxnID)
		}
		described := kadm.DescribedTransactions{}
		if len(ids) > 0 {
			if described, err = adm.DescribeTransactions(ctx, ids...); err != nil {
				return err
			}
		}
		names := make([]string, 0, len(topics))
		for t := range topics {
			names = append(names, t)
		}
		hw, err := adm.ListEndOffsets(ctx, names...)
		if err != nil {
			return err
		}
		lso, err := adm.ListCommittedOffsets(ctx, names...)
		if err != nil {
			return err
		}
		for _, c := range candidates {
			id, listedID := byPid[c.ProducerID]
			d, ok := described[id]
			holds := false
			if listedID && ok && d.Err == nil && d.ProducerID == c.ProducerID {
				holds = d.Topics.Lookup(c.Topic, c.Partition)
			}
			if holds {
				continue // tracked by its coordinator: not hanging
			}
			age := now - c.LastTimestamp
			r := hangingRow{
				Topic: c.Topic, Partition: c.Partition, ProducerId: c.ProducerID,
				ProducerEpoch: int32(c.ProducerEpoch), CoordinatorEpoch: c.CoordinatorEpoch,
				StartOffset: c.CurrentTxnStartOffset, LastTimestamp: c.LastTimestamp,
				LastTimestampRfc3339: rfc3339(c.LastTimestamp), TransactionAgeMs: &age,
				Verdict: "hanging", KafkaSaysHanging: true,
				Reason: "hanging: the coordinator has no transaction for this producer",
			}
			if listedID {
				r.TransactionalId = &id
				if ok && d.Err == nil {
					st := d.State
					r.CoordinatorState = &st
				}
				r.Reason = "hanging: the partition is not in the coordinator's transaction"
			}
			h, okH := hw.Lookup(c.Topic, c.Partition)
			l, okL := lso.Lookup(c.Topic, c.Partition)
			r.BlockedGroups = []string{}
			if okH && okL && h.Err == nil && l.Err == nil {
				b := h.Offset - l.Offset
				r.BlockedRecords = &b
				if b > 0 && holder[tp{c.Topic, c.Partition}] == c.CurrentTxnStartOffset {
					heldAt[len(rows)] = l.Offset
				}
			}
			rows = append(rows, r)
		}
		if len(heldAt) > 0 {
			if err := blockedGroups(ctx, adm, rows, heldAt); err != nil {
				return err
			}
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		if a.Partition != b.Partition {
			return a.Partition < b.Partition
		}
		return a.ProducerId < b.ProducerId
	})
	return writeDoc(out, map[string]any{"Transactions": rows})
}

// blockedGroups fills each LSO holder's BlockedGroups: every group (one
// listing, then every group's committed offsets) committed at that LSO.
func blockedGroups(ctx context.Context, adm *kadm.Client, rows []hangingRow, heldAt map[int]int64) error {
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return err
	}
	fetched := adm.FetchManyOffsets(ctx, listed.Groups()...)
	for i, lso := range heldAt {
		r := &rows[i]
		for g, f := range fetched {
			if f.Err != nil {
				return fmt.Errorf("group %s: %w", g, f.Err)
			}
			if o, ok := f.Fetched.Lookup(r.Topic, r.Partition); ok && o.Err == nil && o.At == lso {
				r.BlockedGroups = append(r.BlockedGroups, g)
			}
		}
		sort.Strings(r.BlockedGroups)
	}
	return nil
}

type differenceRow struct {
	Topic      string
	Partition  int32
	ProducerId int64
	Field      string
	Values     map[string]string
}

type tp struct {
	topic     string
	partition int32
}

// compareReplicas asks every broker for the producer state of each
// partition it holds a replica of (kadm's DescribeProducers only asks
// leaders, so the requests go through kgo's per-broker client) and lists
// the differences field by field, as kdp compare-replicas does.
func compareReplicas(ctx context.Context, cl *kgo.Client, adm *kadm.Client, out *bufio.Writer) error {
	md, err := adm.Metadata(ctx)
	if err != nil {
		return err
	}
	perBroker := map[int32]map[string][]int32{}
	for _, t := range md.Topics {
		for _, p := range t.Partitions {
			for _, r := range p.Replicas {
				if perBroker[r] == nil {
					perBroker[r] = map[string][]int32{}
				}
				perBroker[r][t.Topic] = append(perBroker[r][t.Topic], p.Partition)
			}
		}
	}
	type answer struct {
		broker int32
		resp   *kmsg.DescribeProducersResponse
		err    error
	}
	answers := make(chan answer, len(perBroker))
	var wg sync.WaitGroup
	for b, topics := range perBroker {
		req := kmsg.NewPtrDescribeProducersRequest()
		for t, ps := range topics {
			rt := kmsg.NewDescribeProducersRequestTopic()
			rt.Topic, rt.Partitions = t, ps
			req.Topics = append(req.Topics, rt)
		}
		wg.Add(1)
		go func(b int32) {
			defer wg.Done()
			resp, err := req.RequestWith(ctx, cl.Broker(int(b)))
			answers <- answer{b, resp, err}
		}(b)
	}
	wg.Wait()
	close(answers)
	states := map[tp]map[int32]map[int64]kmsg.DescribeProducersResponseTopicPartitionActiveProducer{}
	for a := range answers {
		if a.err != nil {
			return fmt.Errorf("broker %d: %w", a.broker, a.err)
		}
		for _, t := range a.resp.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					return fmt.Errorf("%s-%d on broker %d: %w", t.Topic, p.Partition, a.broker, kerr.ErrorForCode(p.ErrorCode))
				}
				k := tp{t.Topic, p.Partition}
				if states[k] == nil {
					states[k] = map[int32]map[int64]kmsg.DescribeProducersResponseTopicPartitionActiveProducer{}
				}
				m := map[int64]kmsg.DescribeProducersResponseTopicPartitionActiveProducer{}
				for _, q := range p.ActiveProducers {
					m[q.ProducerID] = q
				}
				states[k][a.broker] = m
			}
		}
	}
	keys := make([]tp, 0, len(states))
	for k := range states {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].topic < keys[j].topic || keys[i].topic == keys[j].topic && keys[i].partition < keys[j].partition
	})
	fields := []struct {
		name string
		get  func(q kmsg.DescribeProducersResponseTopicPartitionActiveProducer) string
	}{
		{"ProducerEpoch", func(q kmsg.DescribeProducersResponseTopicPartitionActiveProducer) string {
			return strconv.Itoa(int(q.ProducerEpoch))
		}},
		{"LastSequence", func(q kmsg.DescribeProducersResponseTopicPartitionActiveProducer) string {
			return strconv.Itoa(int(q.LastSequence))
		}},
		{"LastTimestamp", func(q kmsg.DescribeProducersResponseTopicPartitionActiveProducer) string {
			return strconv.FormatInt(q.LastTimestamp, 10)
		}},
		{"CoordinatorEpoch", func(q kmsg.DescribeProducersResponseTopicPartitionActiveProducer) string {
			return strconv.Itoa(int(q.CoordinatorEpoch))
		}},
		{"CurrentTxnStartOffset", func(q kmsg.DescribeProducersResponseTopicPartitionActiveProducer) string {
			return strconv.FormatInt(q.CurrentTxnStartOffset, 10)
		}},
	}
	rows := []differenceRow{}
	for _, k := range keys {
		byBroker := states[k]
		idSet := map[int64]bool{}
		for _, m := range byBroker {
			for id := range m {
				idSet[id] = true
			}
		}
		ids := make([]int64, 0, len(idSet))
		for id := range idSet {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		for _, id := range ids {
			presence := map[string]string{}
			missing := false
			for b, m := range byBroker {
				if _, ok := m[id]; ok {
					presence[strconv.Itoa(int(b))] = "present"
				} else {
					presence[strconv.Itoa(int(b))] = "absent"
					missing = true
				}
			}
			if missing {
				rows = append(rows, differenceRow{k.topic, k.partition, id, "ActiveProducers", presence})
			}
			for _, f := range fields {
				values := map[string]string{}
				distinct := map[string]bool{}
				for b, m := range byBroker {
					if q, ok := m[id]; ok {
						v := f.get(q)
						values[strconv.Itoa(int(b))] = v
						distinct[v] = true
					}
				}
				if len(distinct) > 1 {
					rows = append(rows, differenceRow{k.topic, k.partition, id, f.name, values})
				}
			}
		}
	}
	return writeDoc(out, map[string]any{"Differences": rows})
}
