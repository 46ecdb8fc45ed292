# The collector's controls against the real job system: redis-server and Sidekiq
# processes running the fixture app. The collector's commands loop runs in this process
# with jobwatch's agent routes in memory (FakeJobwatch), so each test checks what Sidekiq
# did (in Redis, and by the process itself) and what the collector recorded for jobwatch
# in the stream. The same controls through the real jobwatch, from its routes to the
# job's outcome, are in sidekiq_e2e_test.rb.
require "minitest/autorun"
require "securerandom"
require "stringio"
require "time"
require_relative "../support/e2e_harness"
require_relative "../support/fake_jobwatch"

class SidekiqControlsEndToEndTest < Minitest::Test
  MISSING = E2E::Cluster.missing
  Minitest.after_run { E2E::Cluster.stop_instance }
  C = Jobwatch::Sidekiq::Collector

  def setup
    flunk "end-to-end parts missing, install them: #{MISSING.join(", ")}" unless MISSING.empty?
    @cluster = E2E::Cluster.instance
    require "jobwatch/sidekiq/collector/commands"
    @log = StringIO.new
    @jobwatch = FakeJobwatch.new
  end

  def teardown
    return if passed?
    warn "----- commands loop\n#{@log.string[-4000..] || @log.string}"
    @cluster&.dump_logs
  end

  def test_retry_now_moves_a_job_from_the_retry_set_to_its_queue_counted_as_its_retry_and_it_runs
    flag = flag_path
    jid = WaitsToRetryJob.perform_async(flag)
    entry = E2E.wait_for("the job in the retry set") { Sidekiq::RetrySet.new.find_job(jid) }
    assert_operator entry.score, :>, Time.now.to_f + 3000, "it would wait an hour"
    File.write(flag, "")
    assert_equal({ "status" => "done", "details" => { "from" => "retry" } }, carry_out("type" => "retry", "externalId" => jid, "queue" => "default").slice("status", "reason", "details"))
    E2E.wait_for("Sidekiq to run it") { @cluster.done?(jid) }
    assert_nil Sidekiq::RetrySet.new.find_job(jid)
    enqueued = recorded(jid).select { |record| record["k"] == "enqueued" }
    assert_equal [nil, 0], enqueued.map { |record| record["job"]["retry_count"] }, "pushed again as its first retry"
    assert_equal %w[enqueued started retrying enqueued started succeeded], recorded(jid).map { |record| record["k"] }
  end

  def test_kill_moves_a_job_from_the_retry_set_to_the_dead_set_recorded_failed_with_its_error
    jid = WaitsToRetryJob.perform_async(flag_path)
    E2E.wait_for("the job in the retry set") { Sidekiq::RetrySet.new.find_job(jid) }
    assert_equal "done", carry_out("type" => "kill", "externalId" => jid, "queue" => "default")["status"]
    assert_nil Sidekiq::RetrySet.new.find_job(jid)
    refute_nil Sidekiq::DeadSet.new.find_job(jid)
    dead = recorded(jid).last
    assert_equal ["dead", 1, "killed from jobwatch: moved from Sidekiq's retry set to its dead set"], dead.values_at("k", "attempt", "reason")
    assert_match(/\AIOError: .* is missing\z/, dead["error"])
    again = carry_out("type" => "kill", "externalId" => jid, "queue" => "default")
    assert_equal ["failed", "the job is already in Sidekiq's dead set"], again.values_at("status", "reason")
  end

  def test_delete_removes_a_job_from_the_retry_scheduled_and_dead_sets_and_its_queue
    retrying = WaitsToRetryJob.perform_async(flag_path)
    scheduled = SucceedJob.perform_in(3600, "later")
    dead = NeedsFileJob.perform_async(flag_path)
    queued = SucceedJob.set(queue: "parked-delete").perform_async("never")
    E2E.wait_for("the jobs in their sets") { Sidekiq::RetrySet.new.find_job(retrying) && Sidekiq::DeadSet.new.find_job(dead) }
    { retrying => ["default", "retry"], scheduled => ["default", "scheduled"], dead => ["default", "dead"], queued => ["parked-delete", "queue"] }.each do |jid, (queue, from)|
      outcome = carry_out("type" => "delete", "externalId" => jid, "queue" => queue)
      assert_equal({ "status" => "done", "details" => { "from" => from } }, outcome.slice("status", "reason", "details"), from)
      again = carry_out("type" => "delete", "externalId" => jid, "queue" => queue)
      assert_equal "failed", again["status"]
      assert_match(/\Anot found: Sidekiq has no job "#{Regexp.escape(jid)}" in its scheduled, retry or dead set or queue "#{queue}"/, again["reason"])
    end
    assert_nil Sidekiq::RetrySet.new.find_job(retrying)
    assert_nil Sidekiq::ScheduledSet.new.find_job(scheduled)
    assert_nil Sidekiq::DeadSet.new.find_job(dead)
    assert_equal 0, Sidekiq::Queue.new("parked-delete").size
    # a job that would have run is cancelled; a dead one had failed already and stays so
    assert_equal "deleted from jobwatch: removed from Sidekiq's retry set", recorded(retrying).last["reason"]
    assert_equal "deleted from jobwatch: removed from Sidekiq's scheduled set", recorded(scheduled).last["reason"]
    assert_equal "deleted from jobwatch: removed from Sidekiq queue parked-delete", recorded(queued).last["reason"]
    assert_equal "dead", recorded(dead).last["k"]
  end

  def test_promote_runs_a_scheduled_job_now
    jid = SucceedJob.perform_in(3600, "promoted")
    E2E.wait_for("the job in the scheduled set") { Sidekiq::ScheduledSet.new.find_job(jid) }
    assert_equal({ "status" => "done", "details" => { "from" => "scheduled" } }, carry_out("type" => "promote", "externalId" => jid, "queue" => "default").slice("status", "details"))
    E2E.wait_for("Sidekiq to run it") { @cluster.done?(jid) }
    assert_equal %w[scheduled enqueued started succeeded], recorded(jid).map { |record| record["k"] }
    again = carry_out("type" => "promote", "externalId" => jid, "queue" => "default")
    assert_equal "failed", again["status"]
    assert_match(/\Anot found: .* in its scheduled or retry set/, again["reason"])
  end

  def test_a_command_for_a_job_sidekiq_does_not_have_fails_not_found_and_touches_nothing
    jid = "gone-#{SecureRandom.hex(6)}"
    before = digest
    %w[retry promote kill delete].each do |type|
      outcome = carry_out("type" => type, "externalId" => jid, "queue" => "default")
      assert_equal "failed", outcome["status"], type
      assert outcome["reason"].start_with?("not found: Sidekiq has no job \"#{jid}\""), outcome["reason"]
    end
    assert_equal before, digest
    assert_empty recorded(jid)
  end

  def test_a_job_found_in_another_queue_than_the_command_names_is_left_alone
    jid = WaitsToRetryJob.perform_async(flag_path)
    E2E.wait_for("the job in the retry set") { Sidekiq::RetrySet.new.find_job(jid) }
    SucceedJob.set(queue: "elsewhere").perform_async(1)
    outcome = carry_out("type" => "delete", "externalId" => jid, "queue" => "elsewhere")
    assert_equal ["failed", "the job in Sidekiq's retry set is in queue \"default\", not \"elsewhere\": nothing was done"], outcome.values_at("status", "reason")
    refute_nil Sidekiq::RetrySet.new.find_job(jid)
  end

  def test_clearing_a_queue_removes_its_waiting_jobs_records_them_cancelled_and_keeps_it_listed
    jids = Array.new(5) { |i| SucceedJob.set(queue: "clear-me").perform_async(i) }
    other = SucceedJob.set(queue: "clear-me-not").perform_async(0)
    outcome = carry_out("type" => "queue.clean", "queue" => "clear-me", "params" => { "mode" => "waiting" })
    assert_equal({ "status" => "done", "details" => { "removed" => 5 } }, outcome.slice("status", "reason", "details"))
    assert_equal 0, Sidekiq::Queue.new("clear-me").size
    assert Sidekiq.redis { |conn| conn.sismember("queues", "clear-me") }, "still one of Sidekiq's queues"
    assert_equal [other], Sidekiq::Queue.new("clear-me-not").map(&:jid)
    jids.each { |jid| assert_equal ["cancelled", "deleted from jobwatch: queue clear-me cleared"], recorded(jid).last.values_at("k", "reason") }
    assert_empty Sidekiq.redis { |conn| conn.keys("jobwatch:sidekiq:cleared:*") }
    empty = carry_out("type" => "queue.clean", "queue" => "clear-me", "params" => { "mode" => "waiting" })
    assert_equal({ "status" => "done", "details" => { "removed" => 0 } }, empty.slice("status", "reason", "details"))
  end

  def test_a_queue_sidekiq_does_not_list_is_not_found_and_left_untouched
    Sidekiq.redis { |conn| conn.lpush("queue:unlisted", JSON.generate("class" => "SucceedJob", "args" => [1], "jid" => "unlisted-1", "queue" => "unlisted")) }
    %w[queue.clean queue.retry_failed].each do |type|
      outcome = carry_out("type" => type, "queue" => "unlisted", "params" => { "mode" => "waiting" })
      assert_equal "failed", outcome["status"]
      assert outcome["reason"].start_with?("not found: \"unlisted\" is not one of Sidekiq's queues"), outcome["reason"]
    end
    assert_equal 1, Sidekiq.redis { |conn| conn.llen("queue:unlisted") }
  end

  def test_retry_failed_retries_every_dead_job_of_that_queue_and_only_those_matched_literally
    # a glob would find "dead1" for "dead[1]" and miss "dead[1]" itself
    dead = { "dead-a" => 3, "dead-b" => 1, "dead[1]" => 1, "dead1" => 1 }.to_h { |queue, count| [queue, Array.new(count) { kill_in(queue) }] }
    outcome = carry_out("type" => "queue.retry_failed", "queue" => "dead[1]")
    assert_equal({ "status" => "done", "details" => { "retried" => 1 } }, outcome.slice("status", "reason", "details"))
    outcome = carry_out("type" => "queue.retry_failed", "queue" => "dead-a")
    assert_equal({ "status" => "done", "details" => { "retried" => 3 } }, outcome.slice("status", "reason", "details"))
    assert_equal dead["dead-a"].sort, Sidekiq::Queue.new("dead-a").map(&:jid).sort
    assert_equal dead["dead[1]"], Sidekiq::Queue.new("dead[1]").map(&:jid)
    (dead["dead-a"] + dead["dead[1]"]).each { |jid| assert_nil Sidekiq::DeadSet.new.find_job(jid) }
    (dead["dead-b"] + dead["dead1"]).each { |jid| refute_nil Sidekiq::DeadSet.new.find_job(jid), "another queue's dead job stays" }
    assert_equal [0, 0], [Sidekiq::Queue.new("dead-b").size, Sidekiq::Queue.new("dead1").size]
  end

  def test_quiet_and_stop_go_through_the_signal_list_and_the_process_itself_acts
    process = @cluster.start_sidekiq("sidekiq-signals", queues: %w[signals], concurrency: 1)
    identity = @cluster.sidekiq_process_of(process.pid)["identity"]
    worker = { "workerId" => identity, "hostname" => identity.split(":").first, "pid" => process.pid }
    assert_equal({ "status" => "done" }, carry_out(worker.merge("type" => "worker.quiet"), 30).slice("status", "reason"))
    assert_equal "true", @cluster.sidekiq_process_of(process.pid)["quiet"]
    assert_includes process.output, "Received TSTP, no longer accepting new work"
    jid = SucceedJob.set(queue: "signals").perform_async("not fetched")
    sleep 2.5
    assert_equal [jid], Sidekiq::Queue.new("signals").map(&:jid), "a quiet process fetches nothing"
    stopped = carry_out(worker.merge("type" => "worker.stop"), 40)
    assert_equal({ "status" => "done", "reason" => "the process has stopped" }, stopped.slice("status", "reason"))
    E2E.wait_for("the process to exit") { !process.alive? }
    assert_nil @cluster.sidekiq_process_of(process.pid)
    assert_equal [jid], Sidekiq::Queue.new("signals").map(&:jid)
    gone = carry_out(worker.merge("type" => "worker.stop"))
    assert_equal "failed", gone["status"]
    assert gone["reason"].start_with?("not found: no live Sidekiq process #{identity.inspect}"), gone["reason"]
  end

  def test_a_signal_a_hanging_process_does_not_take_is_withdrawn_and_answered_failed
    process = @cluster.start_sidekiq("sidekiq-hanging", queues: %w[hanging], concurrency: 1)
    record = @cluster.sidekiq_process_of(process.pid)
    identity = record["identity"]
    Process.kill("STOP", process.pid)
    begin
      outcome = carry_out({ "type" => "worker.quiet", "workerId" => identity }, 30, 6)
      assert_equal "failed", outcome["status"]
      assert_match(/did not take the TSTP signal within 6s .*withdrawn, nothing was done/, outcome["reason"])
      assert_equal 0, Sidekiq.redis { |conn| conn.llen("#{identity}-signals") }
    ensure
      Process.kill("CONT", process.pid)
    end
    E2E.wait_for("a heartbeat after it goes on", timeout_s: 15) { (@cluster.sidekiq_process_of(process.pid) || {})["beat"].to_f > record["beat"].to_f }
    assert_equal "false", @cluster.sidekiq_process_of(process.pid)["quiet"], "the withdrawn signal never reached it"
  ensure
    process&.stop("TERM")
  end

  private

  # Puts one command through the collector's loop and steps it until it is acknowledged; the outcome.
  # (Positional options: a call's string-keyed hash without braces would be taken for keywords.)
  def carry_out(command, timeout_s = 20, wait_s = C::ProcessControls::WAIT_S)
    id = "cmd-#{SecureRandom.hex(6)}"
    @jobwatch.add(command.merge("id" => id, "createdAt" => Time.now.utc.iso8601(3)))
    processes = C::ProcessControls.new(logger: logger, wait_s: wait_s)
    commands = C::Commands.new(client: @jobwatch, logger: logger, recorder: Jobwatch::Sidekiq.recorder, processes: processes)
    E2E.wait_for("the #{command["type"]} acknowledged", timeout_s: timeout_s, interval_s: 0.25) do
      commands.step
      @jobwatch.outcomes[id]
    end
  end

  def logger
    @logger ||= Logger.new(@log)
  end

  def flag_path
    File.join(@cluster.tmp, "flag-#{SecureRandom.hex(6)}")
  end

  # A dead job of `queue`, as Sidekiq's own kill leaves it; its jid.
  def kill_in(queue)
    jid = SucceedJob.set(queue: queue).perform_async("dead")
    record = Sidekiq::Queue.new(queue).find_job(jid)
    record.delete
    Sidekiq::DeadSet.new.kill(record.value, notify_failure: false)
    jid
  end

  # What the integration and the collector recorded for jobwatch about `jid`, oldest first.
  def recorded(jid)
    entries = Sidekiq.redis { |conn| conn.xrevrange("jobwatch:sidekiq:events", "+", "-", count: 5000) }
    entries.map { |_, fields| JSON.parse(fields["e"]) }.select { |record| record["job"]["jid"] == jid }.reverse
  end

  # Sidekiq's sets and queues, to see that nothing changed.
  def digest
    Sidekiq.redis do |conn|
      [conn.zrange("schedule", 0, -1), conn.zrange("retry", 0, -1), conn.zrange("dead", 0, -1), conn.smembers("queues").sort]
    end
  end
end
