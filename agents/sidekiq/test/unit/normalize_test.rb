require_relative "test_helper"
require "sidekiq"
require "jobwatch/sidekiq/job_record"
require "jobwatch/sidekiq/collector/normalize"

class NormalizeTest < Minitest::Test
  N = Jobwatch::Sidekiq::Collector::Normalize
  T0 = 1_795_626_230.25

  def job(extra = {})
    { "jid" => "abc123", "class" => "HardWorker", "queue" => "critical", "retry" => 5, "created_at" => T0, "enqueued_at" => T0 + 0.01, "args" => [1] }.merge(extra)
  end

  def record(kind, extra = {}, job_extra = {})
    { "v" => 1, "k" => kind, "t" => T0 + 1, "job" => job(job_extra), "max" => 5, "attempt" => 1 }.merge(extra)
  end

  def test_every_kind_maps_to_its_unified_state
    expected = { "enqueued" => "queued", "requeued" => "queued", "scheduled" => "scheduled", "started" => "active", "succeeded" => "completed",
                 "retrying" => "retrying", "dead" => "failed", "cancelled" => "cancelled" }
    expected.each { |kind, state| assert_equal state, N.job_event(record(kind))[:job][:state], kind }
  end

  def test_an_unknown_kind_or_a_record_without_a_jid_or_time_is_refused
    assert_raises(N::InvalidRecord) { N.job_event(record("exploded")) }
    assert_raises(N::InvalidRecord) { N.job_event(record("started", {}, "jid" => "")) }
    assert_raises(N::InvalidRecord) { N.job_event(record("started", "t" => nil)) }
  end

  def test_the_event_carries_jid_class_queue_times_and_sidekiq_fields
    event = N.job_event(record("started", "wid" => "host:1:abc"))
    assert_equal "job_state_change", event[:type]
    assert_equal "sidekiq", event[:framework]
    assert_equal "2026-11-25T17:03:51.250Z", event[:timestamp]
    job = event[:job]
    assert_equal "abc123", job[:externalId]
    assert_equal "HardWorker", job[:name]
    assert_equal "critical", job[:queue]
    assert_equal "host:1:abc", job[:workerId]
    assert_equal 5, job[:maxRetries]
    assert_equal "2026-11-25T17:03:50.250Z", job[:createdAt]
    assert_equal event[:timestamp], job[:startedAt]
    assert_equal({ "jid" => "abc123", "retry" => 5, "enqueuedAt" => "2026-11-25T17:03:50.260Z" }, job[:extensions])
    refute job.key?(:args), "a record's arguments are its own field, never its job's"
  end

  def test_a_records_arguments_are_masked_again_by_the_collectors_settings_and_omitted_by_name
    recorded = [{ "user" => "ada", "password" => "[redacted]" }, { "pin" => "1234" }]
    assert_equal recorded, N.job_event(record("started", "args" => recorded))[:job][:args]
    with_arguments(redact_keys: %w[pin], omit_args: %w[Billing::*]) do
      assert_equal [{ "user" => "ada", "password" => "[redacted]" }, { "pin" => "[redacted]" }], N.job_event(record("started", "args" => recorded))[:job][:args]
      refute N.job_event(record("started", { "args" => [1] }, "class" => "Billing::Charge"))[:job].key?(:args)
    end
  end

  def test_a_sets_entry_carries_the_jobs_arguments_masked_an_active_job_wrappers_own_arguments
    item = job("args" => [{ "job_class" => "SendInvoiceJob", "arguments" => [7, { "api_key" => "k", "to" => "ada" }] }],
               "class" => "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper", "wrapped" => "SendInvoiceJob",
               "retry_count" => 0, "failed_at" => T0, "error_class" => "RuntimeError", "error_message" => "boom")
    assert_equal [7, { "api_key" => "[redacted]", "to" => "ada" }], N.set_entry_event("retry", item, T0 + 30)[:job][:args]
    with_arguments(omit_args: %w[SendInvoiceJob]) { refute N.set_entry_event("dead", item, T0 + 30)[:job].key?(:args) }
  end

  def with_arguments(**settings)
    before = Jobwatch::Sidekiq.arguments
    Jobwatch::Sidekiq.arguments = Jobwatch::Sidekiq::JobArguments.new(**settings)
    yield
  ensure
    Jobwatch::Sidekiq.arguments = before
  end

  def test_an_active_job_wrapper_is_named_by_the_job_it_wraps
    job = N.job_event(record("enqueued", {}, "class" => "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper", "wrapped" => "SendInvoiceJob"))[:job]
    assert_equal "SendInvoiceJob", job[:name]
    assert_equal "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper", job[:extensions]["class"]
  end

  def test_a_finished_run_has_its_start_and_end_and_a_failure_its_error_and_backtrace
    done = N.job_event(record("succeeded", "started" => T0 + 0.5))[:job]
    assert_equal "2026-11-25T17:03:50.750Z", done[:startedAt]
    assert_equal "2026-11-25T17:03:51.250Z", done[:completedAt]
    dead = N.job_event(record("dead", "error" => "RuntimeError: boom", "backtrace" => "app.rb:1", "attempt" => 6))[:job]
    assert_equal "RuntimeError: boom", dead[:error]
    assert_equal "app.rb:1", dead[:stacktrace]
    assert_equal 6, dead[:attempt]
    assert_equal "2026-11-25T17:03:51.250Z", dead[:completedAt]
  end

  def test_a_scheduled_job_has_its_time_as_eta
    job = N.job_event(record("scheduled", {}, "at" => T0 + 60))[:job]
    assert_equal "2026-11-25T17:04:50.250Z", job[:extensions]["eta"]
  end

  def test_attempt_follows_sidekiqs_retry_count
    assert_equal 1, N.job_event(record("started", "attempt" => nil))[:job][:attempt]
    assert_equal 2, N.job_event(record("started", { "attempt" => nil }, "retry_count" => 0))[:job][:attempt]
    assert_equal 4, N.job_event(record("started", { "attempt" => nil }, "retry_count" => 2))[:job][:attempt]
    assert_equal 1, Jobwatch::Sidekiq::JobRecord.attempt_of({})
    assert_equal 3, Jobwatch::Sidekiq::JobRecord.attempt_of("retry_count" => 1)
  end

  def test_max_retries_is_the_jobs_retry_option
    assert_equal 7, Jobwatch::Sidekiq::Compat.max_retries(7)
    assert_equal 0, Jobwatch::Sidekiq::Compat.max_retries(false)
    assert_equal 25, Jobwatch::Sidekiq::Compat.max_retries(true)
    assert_equal 25, Jobwatch::Sidekiq::Compat.max_retries(nil)
  end

  def test_long_fields_are_cut_to_jobwatchs_limits
    job = N.job_event(record("dead", { "error" => "e" * 20_000, "backtrace" => "b" * 60_000 }, "class" => "C" * 2000, "queue" => "q" * 300))[:job]
    assert_equal 1024, job[:name].size
    assert_equal 255, job[:queue].size
    assert_equal 10_000, job[:error].size
    assert_equal 50_000, job[:stacktrace].size
  end

  def test_retry_and_dead_set_entries_are_timed_by_sidekiq_and_count_the_failed_run
    item = job("retry_count" => 1, "error_class" => "IOError", "error_message" => "disk", "failed_at" => T0 + 2, "retried_at" => T0 + 5,
               "error_backtrace" => ["a.rb:1", "b.rb:2"])
    retrying = N.set_entry_event("retry", item, T0 + 30)
    assert_equal "2026-11-25T17:03:55.250Z", retrying[:timestamp]
    assert_equal "retrying", retrying[:job][:state]
    assert_equal 2, retrying[:job][:attempt]
    assert_equal "IOError: disk", retrying[:job][:error]
    assert_equal "a.rb:1\nb.rb:2", retrying[:job][:stacktrace]
    assert_equal "2026-11-25T17:04:20.250Z", retrying[:job][:extensions]["retryAt"]
    dead = N.set_entry_event("dead", item, T0 + 40)
    assert_equal ["failed", "2026-11-25T17:04:30.250Z"], [dead[:job][:state], dead[:timestamp]]
    scheduled = N.set_entry_event("scheduled", job, T0 + 50)
    assert_equal ["scheduled", "2026-11-25T17:03:50.250Z", "2026-11-25T17:04:40.250Z"], [scheduled[:job][:state], scheduled[:timestamp], scheduled[:job][:extensions]["eta"]]
  end

  def test_a_process_is_a_worker_with_its_threads_busy_count_and_queues
    process = { "identity" => "web-1:42:abc", "hostname" => "web-1", "pid" => 42, "concurrency" => 10, "busy" => 3, "queues" => %w[default mail],
                "beat" => T0, "version" => "6.4.1", "tag" => "app" }
    worker = N.worker_event(process, "busy", T0 + 1)
    assert_equal "worker_state_change", worker[:type]
    assert_equal({ externalId: "web-1:42:abc", hostname: "web-1", pid: 42, concurrency: 10, activeJobs: 3, queues: %w[default mail], state: "busy" },
                 worker[:worker].reject { |key, _| key == :metadata })
    assert_equal "2026-11-25T17:03:50.250Z", worker[:worker][:metadata]["lastBeat"]
    refute N.worker_event(process, "offline", T0)[:worker].key?(:activeJobs)
  end

  def test_a_queue_snapshot_carries_depth_consumers_and_its_latency_in_milliseconds
    event = N.queue_event("mail", 7, 2, T0, latency_s: 1.2345)
    assert_equal "queue_snapshot", event[:type]
    assert_equal({ name: "mail", depth: 7, consumers: 2, extensions: { "latencyMs" => 1235 } }, event[:queue])
    # an enqueuer's clock ahead of the collector's gives a negative wait: none yet
    assert_equal({ "latencyMs" => 0 }, N.queue_event("mail", 0, 0, T0, latency_s: -0.5)[:queue][:extensions])
    refute N.queue_event("mail", 0, 0, T0)[:queue].key?(:extensions), "latency not read: nothing said"
    refute N.queue_event("mail", 0, 0, T0, latency_s: Float::NAN)[:queue].key?(:extensions)
  end

  def test_a_queue_snapshot_says_whether_sidekiq_has_the_queue_paused
    assert_equal({ "latencyMs" => 0, "paused" => false }, N.queue_event("mail", 0, 0, T0, latency_s: 0, paused: false)[:queue][:extensions])
    assert_equal({ "paused" => true }, N.queue_event("mail", 0, 0, T0, paused: true)[:queue][:extensions])
    refute N.queue_event("mail", 0, 0, T0, paused: "yes")[:queue].key?(:extensions), "not read: nothing said"
  end
end
