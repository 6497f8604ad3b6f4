package main

import (
	"bufio"
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// blockedAfterMs is kdp blocked's default --blocked-after (1m): a group at
// the LSO of a transaction whose producer wrote within it is waiting, not
// blocked.
const blockedAfterMs = 60_000

// errFound is the Go program's exit 4, as kdp's: a group is blocked.
var errFound = errors.New("a group is blocked")

type blockedRow struct {
	Topic                   *string
	Partition               *int32
	HighWatermark           *int64
	LastStableOffset        *int64
	HeldBack                *int64
	ProducerId              *int64
	TransactionalId         *string
	CoordinatorState        *string
	TransactionStartRfc3339 *string
	TransactionAgeMs        *int64
	ProducerIdleMs          *int64
	AutoAbort               *string
	Group                   *string
	GroupState              *string
	GroupType               *string
	Members                 *int
	CommittedOffset         *int64
	Verdict                 *string
	Error                   *string
	Unblock                 *string
}

func ptr[T any](v T) *T { return &v }

// the transaction states kdp knows by name (any other is not shown)
var txnStates = map[string]bool{
	"Empty": true, "Ongoing": true, "PrepareCommit": true, "PrepareAbort": true,
	"CompleteCommit": true, "CompleteAbort": true, "PrepareEpochFence": true, "Dead": true,
}

var groupStates = []string{"Empty", "Stable", "PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling", "Dead"}

// groupState is the state's name as kdp spells it (case-insensitive match).
func groupState(s string) string {
	for _, k := range groupStates {
		if strings.EqualFold(k, s) {
			return k
		}
	}
	return s
}

func groupType(s string) string {
	if strings.EqualFold(s, "classic") || strings.EqualFold(s, "consumer") {
		return strings.ToLower(s)
	}
	return s
}

// shellWord quotes a for a POSIX shell unless it is plain.
func shellWord(a string) string {
	plain := a != ""
	for _, c := range a {
		if !(c < 128 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_@%+=:,./-", c))) {
			plain = false
			break
		}
	}
	if plain {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

func commandLine(args []string) string {
	words := make([]string, len(args))
	for i, a := range args {
		words[i] = shellWord(a)
	}
	return strings.Join(words, " ")
}

func kerrName(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message
	}
	return "UNKNOWN_SERVER_ERROR"
}

// groupInfo is one group as listed and described.
type groupInfo struct {
	state, typ *string
	members    *int
}

// readGroups lists every group, then fetches every group's committed
// offsets and describes each (DescribeGroups for classic groups,
// ConsumerGroupDescribe for consumer groups), as kdp blocked reads them.
func readGroups(ctx context.Context, adm *kadm.Client) (kadm.FetchOffsetsResponses, map[string]groupInfo, error) {
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return nil, nil, err
	}
	var classic, consumer []string
	info := map[string]groupInfo{}
	for _, l := range listed.Sorted() {
		var g groupInfo
		if l.State != "" {
			g.state = ptr(groupState(l.State))
		}
		if l.GroupType != "" {
			g.typ = ptr(groupType(l.GroupType))
		}
		info[l.Group] = g
		switch strings.ToLower(l.GroupType) {
		case "", "classic":
			classic = append(classic, l.Group)
		case "consumer":
			consumer = append(consumer, l.Group)
		}
	}
	type described struct {
		classic  kadm.DescribedGroups
		consumer kadm.DescribedConsumerGroups
		err      error
	}
	done := make(chan described, 1)
	go func() {
		var d described
		if len(classic) > 0 {
			if d.classic, d.err = adm.DescribeGroups(ctx, classic...); d.err != nil {
				done <- d
				return
			}
		}
		if len(consumer) > 0 {
			d.consumer, d.err = adm.DescribeConsumerGroups(ctx, consumer...)
		}
		done <- d
	}()
	fetched := adm.FetchManyOffsets(ctx, listed.Groups()...)
	d := <-done
	if d.err != nil {
		return nil, nil, d.err
	}
	for id, g := range d.classic {
		if g.Err == nil {
			i := info[id]
			i.state, i.typ, i.members = ptr(groupState(g.State)), ptr("classic"), ptr(len(g.Members))
			info[id] = i
		}
	}
	for id, g := range d.consumer {
		if g.Err == nil {
			i := info[id]
			i.state, i.typ, i.members = ptr(groupState(g.State)), ptr("consumer"), ptr(len(g.Members))
			info[id] = i
		}
	}
	return fetched, info, nil
}

// blocked is kdp blocked --output json on kadm: every partition with an open
// transaction whose LSO is below its high watermark, the transaction
// holding it, each group's committed offset there with its verdict, and
// the command that unblocks it (find-hanging --repair's rules).
func blocked(ctx context.Context, adm *kadm.Client, out *bufio.Writer, bootstrap string) error {
	type groupsRead struct {
		fetched kadm.FetchOffsetsResponses
		info    map[string]groupInfo
		err     error
	}
	groupsDone := make(chan groupsRead, 1)
	go func() {
		var g groupsRead
		g.fetched, g.info, g.err = readGroups(ctx, adm)
		groupsDone <- g
	}()
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
	now := time.Now().UnixMilli()
	ds, err := describeAll(ctx, adm)
	if err != nil {
		return err
	}
	// each partition's open transactions, the holder of its LSO (the
	// earliest), and each producer's latest write anywhere
	type partitionOpen struct {
		holder kadm.DescribedProducer
		open   []kadm.DescribedProducer
	}
	opens := map[tp]*partitionOpen{}
	lastWrite := map[int64]int64{}
	pidSet := map[int64]bool{}
	topicSet := map[string]bool{}
	ds.EachProducer(func(p kadm.DescribedProducer) {
		if p.LastTimestamp > 0 && p.LastTimestamp > lastWrite[p.ProducerID] {
			lastWrite[p.ProducerID] = p.LastTimestamp
		}
		if p.CurrentTxnStartOffset < 0 {
			return
		}
		k := tp{p.Topic, p.Partition}
		o := opens[k]
		if o == nil {
			o = &partitionOpen{holder: p}
			opens[k] = o
		} else if h := o.holder; p.CurrentTxnStartOffset < h.CurrentTxnStartOffset ||
			p.CurrentTxnStartOffset == h.CurrentTxnStartOffset && p.ProducerID < h.ProducerID {
			o.holder = p
		}
		o.open = append(o.open, p)
		pidSet[p.ProducerID] = true
		topicSet[p.Topic] = true
	})
	pinned := []tp{}
	hw, lso := kadm.ListedOffsets{}, kadm.ListedOffsets{}
	byPid := map[int64]string{}
	described := kadm.DescribedTransactions{}
	if len(opens) > 0 {
		pids := make([]int64, 0, len(pidSet))
		for pid := range pidSet {
			pids = append(pids, pid)
		}
		listed, err := adm.ListTransactions(ctx, pids, nil)
		if err != nil {
			return err
		}
		ids := []string{}
		for _, l := range listed {
			byPid[l.ProducerID] = l.TxnID
			ids = append(ids, l.TxnID)
		}
		if len(ids) > 0 {
			if described, err = adm.DescribeTransactions(ctx, ids...); err != nil {
				return err
			}
		}
		names := make([]string, 0, len(topicSet))
		for t := range topicSet {
			names = append(names, t)
		}
		if hw, err = adm.ListEndOffsets(ctx, names...); err != nil {
			return err
		}
		if lso, err = adm.ListCommittedOffsets(ctx, names...); err != nil {
			return err
		}
		for k := range opens {
			h, okH := hw.Lookup(k.topic, k.partition)
			l, okL := lso.Lookup(k.topic, k.partition)
			if !okH || !okL || h.Err != nil || l.Err != nil {
				return errors.New("offsets of " + k.topic + "-" + strconv.Itoa(int(k.partition)) + " not read")
			}
			if l.Offset < h.Offset {
				pinned = append(pinned, k)
			}
		}
	}
	sort.Slice(pinned, func(i, j int) bool {
		return pinned[i].topic < pinned[j].topic || pinned[i].topic == pinned[j].topic && pinned[i].partition < pinned[j].partition
	})

	// what the coordinator says of a producer's transaction on a partition
	type coordinator struct {
		id         *string
		desc       *kadm.DescribedTransaction // described
		notFound   bool
		failed     bool // denied or failed: unknown
		tracked    bool // described and holding the partition
		state      string
		stateKnown bool
	}
	coordinatorOf := func(pid int64, topic string, partition int32) coordinator {
		var c coordinator
		id, ok := byPid[pid]
		if !ok {
			return c // not listed: every broker answered, any id may be described
		}
		c.id = &id
		d, ok := described[id]
		switch {
		case !ok || errors.Is(d.Err, kerr.TransactionalIDNotFound):
			c.notFound = true
		case d.Err != nil:
			c.failed = true
		default:
			c.desc = &d
			c.tracked = d.Topics.Lookup(topic, partition)
			c.state, c.stateKnown = d.State, txnStates[d.State]
		}
		return c
	}
	prepare := func(s string) bool { return s == "PrepareCommit" || s == "PrepareAbort" || s == "PrepareEpochFence" }
	// find-hanging's verdict on a candidate: "hanging", "stuck", "unknown" or "ok"
	verdictOf := func(p kadm.DescribedProducer) string {
		c := coordinatorOf(p.ProducerID, p.Topic, p.Partition)
		v := "ok"
		switch {
		case c.id == nil || c.notFound:
			v = "hanging"
		case c.failed:
			v = "unknown"
		case !c.tracked:
			v = "hanging"
		case prepare(c.state) && c.desc.StartTimestamp >= 0 && now-c.desc.StartTimestamp > maxTimeout:
			v = "stuck"
		}
		if v == "hanging" && p.LastTimestamp <= 0 {
			v = "unknown"
		}
		return v
	}
	candidate := func(p kadm.DescribedProducer) bool {
		return p.LastTimestamp <= 0 || now-p.LastTimestamp > maxTimeout
	}
	conn := []string{"--bootstrap-server", bootstrap}

	// find-hanging --repair's plan: one step per candidate that needs one,
	// in topic, partition and producer order, a transactional id's
	// partitions sharing one force-terminate; each partition's step is the
	// first that names it
	type step struct {
		args []string // nil: skipped (a decided outcome)
	}
	var steps []step
	stepOf := map[tp]int{}
	idStep := map[string]int{}
	var cands []kadm.DescribedProducer
	for _, k := range pinned {
		for _, p := range opens[k].open {
			if candidate(p) {
				cands = append(cands, p)
			}
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		if a.Partition != b.Partition {
			return a.Partition < b.Partition
		}
		return a.ProducerID < b.ProducerID
	})
	for _, p := range cands {
		k := tp{p.Topic, p.Partition}
		i := len(steps)
		switch verdictOf(p) {
		case "ok":
			continue
		case "unknown":
			args := append([]string{"kdp", "abort"}, conn...)
			steps = append(steps, step{append(args, "--topic", p.Topic, "--partition", strconv.Itoa(int(p.Partition)),
				"--start-offset", strconv.FormatInt(p.CurrentTxnStartOffset, 10))})
		default:
			c := coordinatorOf(p.ProducerID, p.Topic, p.Partition)
			switch {
			case c.tracked && c.state == "Ongoing":
				if j, ok := idStep[*c.id]; ok {
					i = j
				} else {
					idStep[*c.id] = i
					args := append([]string{"kdp", "force-terminate"}, conn...)
					steps = append(steps, step{append(args, "--transactional-id", *c.id)})
				}
			case c.tracked && (c.state == "PrepareCommit" || c.state == "PrepareAbort"):
				steps = append(steps, step{nil})
			default:
				args := append([]string{"kdp", "abort"}, conn...)
				steps = append(steps, step{append(args, "--topic", p.Topic, "--partition", strconv.Itoa(int(p.Partition)),
					"--producer-id", strconv.FormatInt(p.ProducerID, 10),
					"--producer-epoch", strconv.Itoa(int(p.ProducerEpoch)),
					"--coordinator-epoch", strconv.Itoa(int(max(p.CoordinatorEpoch, 0))))})
			}
		}
		if j, ok := stepOf[k]; !ok || i < j {
			stepOf[k] = i
		}
	}

	g := <-groupsDone
	if g.err != nil {
		return g.err
	}
	groupIDs := make([]string, 0, len(g.fetched))
	for id := range g.fetched {
		groupIDs = append(groupIDs, id)
	}
	sort.Strings(groupIDs)
	// each pinned partition's committed offsets, in group order
	type committed struct {
		group string
		o     kadm.OffsetResponse
	}
	on := map[tp][]committed{}
	pinnedSet := map[tp]bool{}
	for _, k := range pinned {
		pinnedSet[k] = true
	}
	for _, id := range groupIDs {
		f := g.fetched[id]
		if f.Err != nil {
			continue
		}
		f.Fetched.Each(func(o kadm.OffsetResponse) {
			k := tp{o.Topic, o.Partition}
			if pinnedSet[k] && (o.Err != nil || o.At >= 0) {
				on[k] = append(on[k], committed{id, o})
			}
		})
	}

	rows := []blockedRow{}
	anyBlocked := false
	for _, k := range pinned {
		h, _ := hw.Lookup(k.topic, k.partition)
		l, _ := lso.Lookup(k.topic, k.partition)
		p := opens[k].holder
		c := coordinatorOf(p.ProducerID, k.topic, k.partition)
		base := blockedRow{
			Topic: ptr(k.topic), Partition: ptr(k.partition), HighWatermark: ptr(h.Offset),
			LastStableOffset: ptr(l.Offset), HeldBack: ptr(h.Offset - l.Offset), ProducerId: ptr(p.ProducerID),
			TransactionalId: c.id,
		}
		if c.stateKnown {
			base.CoordinatorState = ptr(c.state)
		}
		var started *int64
		if c.tracked && c.desc.StartTimestamp > 0 {
			started = ptr(c.desc.StartTimestamp)
		} else if p.LastTimestamp > 0 {
			started = ptr(p.LastTimestamp)
		}
		if started != nil {
			base.TransactionStartRfc3339 = rfc3339(*started)
			base.TransactionAgeMs = ptr(now - *started)
		}
		w, written := lastWrite[p.ProducerID]
		if written {
			base.ProducerIdleMs = ptr(max(now-w, 0))
		}
		live := written && now-w < blockedAfterMs
		// when the coordinator aborts it on its own
		autoAt := false
		switch {
		case c.tracked && c.state == "Ongoing":
			if c.desc.StartTimestamp > 0 {
				base.AutoAbort = rfc3339(c.desc.StartTimestamp + int64(c.desc.TimeoutMillis))
				autoAt = true
			}
		case c.tracked && (c.state == "PrepareCommit" || c.state == "PrepareAbort"):
			base.AutoAbort = ptr("decided (" + c.state + ")")
		default:
			v := ""
			if candidate(p) {
				v = verdictOf(p)
			}
			switch {
			case v == "hanging":
				base.AutoAbort = ptr("never")
			case v == "unknown":
			case c.id == nil || c.notFound || c.desc != nil && !c.tracked:
				base.AutoAbort = ptr("never")
			}
		}
		i, hasStep := stepOf[k]
		switch {
		case live:
			base.Unblock = ptr("wait")
		case hasStep:
			if a := steps[i].args; a != nil {
				base.Unblock = ptr(commandLine(a))
			}
		case autoAt && c.id != nil:
			base.Unblock = ptr(commandLine(append(append([]string{"kdp", "force-terminate"}, conn...), "--transactional-id", *c.id)))
		case c.tracked && (c.state == "PrepareCommit" || c.state == "PrepareAbort"):
			base.Unblock = ptr("wait")
		}
		if len(on[k]) == 0 {
			rows = append(rows, base)
			continue
		}
		for _, cm := range on[k] {
			r := base
			info := g.info[cm.group]
			r.Group, r.GroupState, r.GroupType, r.Members = ptr(cm.group), info.state, info.typ, info.members
			verdict := ""
			switch {
			case cm.o.Err != nil:
				verdict, r.Error = "unknown", ptr(kerrName(cm.o.Err))
			case cm.o.At == l.Offset && live:
				verdict = "waiting"
			case cm.o.At == l.Offset:
				verdict = "blocked"
				anyBlocked = true
			case cm.o.At < l.Offset:
				verdict = "lagging"
			default:
				verdict = "past the LSO"
			}
			if cm.o.Err == nil {
				r.CommittedOffset = ptr(cm.o.At)
			}
			r.Verdict = &verdict
			if verdict != "blocked" && verdict != "waiting" {
				r.Unblock = nil
			}
			rows = append(rows, r)
		}
	}
	// a group whose committed offsets could not be read at all
	for _, id := range groupIDs {
		if f := g.fetched[id]; f.Err != nil {
			rows = append(rows, blockedRow{Group: ptr(id), Verdict: ptr("unknown"), Error: ptr(kerrName(f.Err))})
		}
	}
	if err := writeDoc(out, map[string]any{"Blocked": rows}); err != nil {
		return err
	}
	if anyBlocked {
		return errFound
	}
	return nil
}
