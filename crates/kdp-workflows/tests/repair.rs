//! A repair automated with the libraries alone, against the in-process
//! mock serving the demo cluster: planned, checked again, carried out and
//! reported with the plan's numbers; refused when it cannot be right.

/// A repair automated with the libraries alone, against the in-process mock
/// serving the demo cluster (payments-0: producer 7003's transaction open
/// from 40112, 78 records held back).
mod automated {
    use std::sync::Arc;
    use std::time::Duration;

    use kdp_client::admin::DriverOptions;
    use kdp_client::txn::write_txn_markers::abort;
    use kdp_client::{BrokerAddress, Client, ClientConfig, DescribeOptions, TimeBound};
    use kdp_domain::coordinator::Description;
    use kdp_domain::joined::Joined;
    use kdp_domain::repair::{
        plan_abort_from, AbortTarget, Action, Changed, CoordinatorAnswer, Done, NotAsked, Outcome,
        Refusal,
    };
    use kdp_server::{MockCluster, MockConfig};
    use kdp_workflows::repair::{execute, join_partitions, plan_abort, PlanError, RepairOptions};

    async fn demo() -> (MockCluster, Arc<Client>) {
        let cluster = kdp_server::demo::cluster().expect("demo cluster");
        let config = MockConfig {
            host: "127.0.0.1".into(),
            port: 0,
            ..MockConfig::default()
        };
        let mock = MockCluster::start(cluster, config).await.expect("mock");
        let bootstrap = BrokerAddress::parse_list(&mock.bootstrap()).expect("bootstrap");
        let client = Client::connect(bootstrap, ClientConfig::default())
            .await
            .expect("connect");
        (mock, Arc::new(client))
    }

    /// 20 s from the call on, for each step.
    fn bounds() -> TimeBound {
        TimeBound::after(Duration::from_secs(20))
    }

    /// payments-0 as the mock holds it: (high watermark, LSO, 7003's start offset, epoch).
    fn payments(mock: &MockCluster) -> (i64, i64, Option<(i64, i32)>) {
        let c = mock.cluster();
        let p = c.partition("payments", 0).expect("payments-0");
        let p7003 = p
            .producers_on(p.leader)
            .iter()
            .find(|s| s.producer_id == 7003)
            .map(|s| (s.current_txn_start_offset, s.producer_epoch));
        (p.high_watermark, p.last_stable_offset(), p7003)
    }

    fn payments_abort(epoch: i16, coordinator_epoch: i32) -> AbortTarget {
        AbortTarget::Producer {
            topic: "payments".into(),
            partition: 0,
            producer_id: 7003,
            producer_epoch: epoch,
            coordinator_epoch,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_plan_is_checked_again_carried_out_and_reported_with_its_numbers() {
        let (mock, client) = demo().await;
        let target = AbortTarget::StartOffset {
            topic: "payments".into(),
            partition: 0,
            start_offset: 40112,
        };
        let plan = plan_abort(&client, &target, &DescribeOptions::default(), &bounds())
            .await
            .expect("a plan");
        assert_eq!(plan.steps.len(), 1);
        let step = &plan.steps[0];
        assert_eq!(step.number, 1);
        assert!(
            matches!(&step.action, Action::Abort(a) if a.producer_id == 7003 && a.coordinator_epoch == 2)
        );
        assert_eq!(step.seen.partitions[0].start_offset, 40112);
        assert_eq!(step.seen.unblocks(), Some(78));

        // the same plan made stale twice: another epoch, then another start offset
        let mut stale = plan.clone();
        stale.steps[0].seen.producer_epoch = 1;
        let mut moved = plan.clone();
        moved.steps[0].seen.partitions[0].start_offset = 40000;
        let before = payments(&mock);
        for p in [&stale, &moved] {
            let report = execute(&client, p, &RepairOptions::new(&bounds()), &bounds()).await;
            assert!(
                matches!(
                    &report.outcomes[0].outcome,
                    Outcome::Refused(Changed::ProducerMoved { .. })
                ),
                "{report:?}"
            );
            assert_eq!(report.refused(), 1);
        }
        assert_eq!(payments(&mock), before, "nothing was sent");

        let report = execute(&client, &plan, &RepairOptions::new(&bounds()), &bounds()).await;
        assert_eq!(report.outcomes[0].step.number, 1);
        assert_eq!(report.outcomes[0].outcome, Outcome::Done(Done::Aborted));
        assert!(report.all_sent_done());
        let (hw, lso, p7003) = payments(&mock);
        assert_eq!(
            (lso, p7003),
            (hw, Some((-1, 0))),
            "ended; the LSO at the high watermark"
        );

        // carried out again: the transaction ended, so it is refused, not sent
        let report = execute(&client, &plan, &RepairOptions::new(&bounds()), &bounds()).await;
        assert!(
            matches!(
                &report.outcomes[0].outcome,
                Outcome::Refused(Changed::TransactionEnded { .. })
            ),
            "{report:?}"
        );
        assert_eq!(payments(&mock).0, hw, "no second marker");
        mock.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_plan_that_cannot_be_right_is_refused_and_nothing_is_sent() {
        let (mock, client) = demo().await;
        let before = payments(&mock);
        let refused = |r: Result<_, PlanError>| match r {
            Err(PlanError::Refused(why)) => why,
            other => panic!("not refused: {other:?}"),
        };
        let ghost = AbortTarget::Producer {
            topic: "payments".into(),
            partition: 0,
            producer_id: 9999,
            producer_epoch: 6,
            coordinator_epoch: 2,
        };
        let why =
            refused(plan_abort(&client, &ghost, &DescribeOptions::default(), &bounds()).await);
        let Refusal::NoOpenTransaction { found, .. } = &why else {
            panic!("{why:?}");
        };
        // what the partition does have
        assert!(found
            .iter()
            .any(|p| p.producer_id == 7003 && p.current_txn_start_offset == 40112));
        for (epoch, coordinator_epoch) in [(6, 2), (0, 3), (0, 1)] {
            let why = refused(
                plan_abort(
                    &client,
                    &payments_abort(epoch, coordinator_epoch),
                    &DescribeOptions::default(),
                    &bounds(),
                )
                .await,
            );
            assert!(matches!(why, Refusal::EpochsDisagree { .. }), "{why:?}");
        }
        let why = refused(
            plan_abort(
                &client,
                &payments_abort(0, 1),
                &DescribeOptions::default(),
                &bounds(),
            )
            .await,
        );
        assert_eq!(
            why.leader_would_answer(),
            Some(kdp_wire::ErrorCode::TRANSACTION_COORDINATOR_FENCED),
            "{why}"
        );
        assert_eq!(payments(&mock), before, "nothing was sent");
        // the partition's own epochs are a plan
        let plan = plan_abort(
            &client,
            &payments_abort(0, 2),
            &DescribeOptions::default(),
            &bounds(),
        )
        .await
        .expect("plan");
        assert_eq!(plan.steps[0].seen.partitions[0].start_offset, 40112);
        mock.shutdown().await;
    }

    /// ledger-0 is 8001's (ledger-writer, whose Ongoing transaction holds
    /// ledger-1 only). Only the coordinator's description supports saying
    /// so; when its DescribeTransactions failed, the plan records that the
    /// coordinator could not be asked.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn only_the_coordinators_answer_supports_a_claim_about_its_transaction() {
        let (mock, client) = demo().await;
        let joined: Joined = join_partitions(
            &client,
            [("ledger".to_string(), 0)],
            &DescribeOptions::default(),
            &bounds(),
        )
        .await
        .expect("join");
        let target = AbortTarget::StartOffset {
            topic: "ledger".into(),
            partition: 0,
            start_offset: 5120,
        };
        let plan = plan_abort_from(&joined, &target).expect("plan");
        let answer = &plan.steps[0].seen.coordinator;
        assert!(
            matches!(answer, CoordinatorAnswer::Described(t) if t.transactional_id == "ledger-writer")
        );
        assert_eq!(answer.includes("ledger", 0), Some(false));

        let mut unreachable = joined.clone();
        unreachable.view.descriptions.insert(
            "ledger-writer".into(),
            Description::Failed("COORDINATOR_NOT_AVAILABLE"),
        );
        let plan = plan_abort_from(&unreachable, &target).expect("plan");
        let answer = &plan.steps[0].seen.coordinator;
        assert_eq!(
            answer,
            &CoordinatorAnswer::NotAsked(NotAsked::DescribeFailed {
                transactional_id: "ledger-writer".into(),
                error: "COORDINATOR_NOT_AVAILABLE",
            })
        );
        assert_eq!(answer.includes("ledger", 0), None, "no claim either way");
        assert_eq!(answer.state(), None);
        mock.shutdown().await;
    }

    /// The lever itself: a marker sent twice (a retry after a lost answer)
    /// is accepted twice and ends nothing more.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_retried_marker_is_harmless() {
        let (mock, client) = demo().await;
        let plan = plan_abort(
            &client,
            &payments_abort(0, 2),
            &DescribeOptions::default(),
            &bounds(),
        )
        .await
        .expect("plan");
        let Action::Abort(spec) = &plan.steps[0].action else {
            panic!("{plan:?}");
        };
        for _ in 0..2 {
            let results = abort(
                &client,
                vec![spec.clone()],
                &DriverOptions::default(),
                &bounds(),
            )
            .await;
            assert_eq!(results.get(&spec.key()), Some(&Ok(())), "{results:?}");
            let (hw, lso, p7003) = payments(&mock);
            assert_eq!((lso, p7003), (hw, Some((-1, 0))));
        }
        mock.shutdown().await;
    }
}
