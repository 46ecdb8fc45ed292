# End to end with real parts: redis-server, the jobwatch service, Sidekiq running the
# fixture app with the integration installed, and the collector. Each test pushes its
# own jobs, so the order they run in does not matter; the one cluster is shared.
require "minitest/autorun"
require "time"
require_relative "../support/e2e_harness"

class SidekiqEndToEndTest < Minitest::Test
  MISSING = E2E::Cluster.missing
  Minitest.after_run { E2E::Cluster.stop_instance }

  def setup
    flunk "end-to-end parts missing, install them: #{MISSING.join(", ")}" unless MISSING.empty?
    @cluster = E2E::Cluster.instance
    @api = @cluster.api
  end

  def teardown
    @cluster&.dump_logs unless passed?
  end

  def test_a_job_that_succeeds_is_completed_with_its_worker_times_and_queue
    jid = SucceedJob.perform_async("hello")
    job = wait_state(jid, "completed")
    assert_equal "SucceedJob", job["name"]
    assert_equal "default", job["queue"]
    assert_equal 1, job["attempt"]
    assert_equal 25, job["maxRetries"]
    assert_equal %w[queued active completed], history(job)
    assert job["durationMs"] >= 0
    assert_equal jid, job["extensions"]["jid"]
    worker = @api.workers.find { |w| w["externalId"] == job["workerId"] }
    refute_nil worker, "the job's workerId #{job["workerId"]} names a listed worker"
    assert_equal Sidekiq::ProcessSet.new.find { |p| p["pid"] == @cluster.sidekiq.pid }["identity"], worker["externalId"]
    assert_equal 3, worker["concurrency"]
    assert_equal ["default"], worker["queues"]
    assert_match(/\A\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\z/, job["startedAt"])
  end

  def test_a_jobs_arguments_reach_jobwatch_masked_before_they_leave_and_a_job_omit_args_names_goes_without
    account = { "owner" => "ada", "login" => { "password" => "hunter2" } }
    options = { "invoice_id" => "INV-#{rand(1 << 30)}", "cards" => [{ "card_number" => "4242424242424242", "exp" => "12/30" }] }
    jid = ChargeJob.perform_async(account, 12.5, options)
    signed = SignInJob.perform_async("ada", "hunter2")
    job = wait_state(jid, "completed")
    # jobwatch masks nothing here (REDACT_KEYS=none): the integration and the collector did, at every depth
    assert_equal [{ "owner" => "ada", "login" => { "password" => "[redacted]" } }, 12.5,
                  { "invoice_id" => options["invoice_id"], "cards" => [{ "card_number" => "[redacted]", "exp" => "12/30" }] }], job["args"]
    assert_nil job["result"], "Sidekiq keeps no return value"
    found = @api.call("GET", "/api/jobs?data.2.invoice_id=#{options["invoice_id"]}")["data"]
    assert_equal [jid], found.map { |each| each["externalId"] }
    assert_nil wait_state(signed, "completed")["args"], "--omit-args SignInJob: its arguments are not sent"
    # nor are they in the stream in Redis, where the integration masked what it recorded
    recorded = Sidekiq.redis { |conn| conn.xrange("jobwatch:sidekiq:events", "-", "+") }.map { |_, fields| JSON.parse(fields["e"]) }
    refute_empty recorded.select { |record| record["job"]["jid"] == jid && record["args"] }
    assert recorded.select { |record| record["job"]["jid"] == signed }.none? { |record| record.key?("args") }
    refute_includes JSON.generate(recorded), "hunter2"
    refute_includes JSON.generate(recorded), "4242424242424242"
  end

  def test_a_job_that_fails_then_succeeds_on_its_retry_shows_both_attempts
    jid = FlakyJob.perform_async("flaky-#{rand(1 << 30)}")
    job = wait_state(jid, "completed")
    assert_equal 2, job["attempt"]
    assert_equal 3, job["maxRetries"]
    assert_equal %w[queued active retrying queued active completed], history(job)
    # the run that succeeded had no error: the first run's is not the job's current error
    assert_nil job["error"]
    assert_nil job["stacktrace"]
  end

  def test_a_job_whose_retries_run_out_is_failed_with_its_error_and_backtrace
    jid = DoomedJob.perform_async("doomed #{rand(1 << 30)}")
    job = wait_state(jid, "failed")
    assert_equal %w[queued active retrying queued active failed], history(job)
    assert_equal 2, job["attempt"]
    assert_equal 1, job["maxRetries"]
    assert_match(/\ARuntimeError: doomed \d+\z/, job["error"])
    assert_match(/fixtures\/app\.rb:\d+:in `perform'/, job["stacktrace"])
    refute_nil Sidekiq::DeadSet.new.find_job(jid), "Sidekiq keeps it in its dead set"
  end

  def test_a_scheduled_job_is_scheduled_for_its_time_until_it_runs
    at = Time.now + 4
    jid = SucceedJob.perform_at(at, "later")
    job = wait_state(jid, "scheduled", timeout_s: 10)
    assert_in_delta at.to_f, iso_s(job["scheduledFor"]), 0.01
    job = wait_state(jid, "completed", timeout_s: 20)
    assert_operator iso_s(job["startedAt"]), :>=, at.to_f - 0.01
    assert_equal %w[scheduled queued active completed], history(job)
    assert_in_delta at.to_f, iso_s(job["scheduledFor"]), 0.01, "the time stays once the job is enqueued"
  end

  def test_a_sidekiq_process_killed_with_kill_9_goes_offline_and_its_running_job_is_reported_lost
    solo = @cluster.start_sidekiq("sidekiq-solo", queues: %w[solo], concurrency: 1)
    identity = @cluster.sidekiq_process_of(solo.pid)["identity"]
    jid = SleepyJob.set(queue: "solo").perform_async(60)
    wait_state(jid, "active")
    E2E.wait_for("the solo worker to be busy in jobwatch") { @api.workers.find { |w| w["externalId"] == identity && w["state"] == "busy" && w["activeJobs"] == 1 } }
    solo.stop("KILL")
    killed_at = Time.now.to_f
    worker = E2E.wait_for("the killed worker to be offline", timeout_s: 30) do
      found = @api.workers.find { |w| w["externalId"] == identity }
      found if found && found["state"] == "offline"
    end
    # offline stays offline: jobwatch's 6 s rule could have done this alone, the collector's own report must not flap back
    sleep 0.1 until Time.now.to_f > killed_at + 12
    assert_equal "offline", @api.workers.find { |w| w["externalId"] == identity }["state"], worker.inspect
    job = wait_state(jid, "failed", timeout_s: 10)
    assert_match(/lost: Sidekiq process #{Regexp.escape(identity)} stopped/, job["error"])
  end

  def test_nothing_is_missing_when_the_collector_is_killed_while_jobs_run_and_restarted
    spanning = SleepyJob.perform_async(2)
    wait_state(spanning, "active")
    @cluster.collector.stop("KILL")
    jids = Array.new(15) { |i| SucceedJob.perform_async(i) }
    E2E.wait_for("Sidekiq to run the 16 jobs") { (jids + [spanning]).all? { |jid| @cluster.done?(jid) } }
    @cluster.start_collector
    E2E.wait_for("all 16 jobs completed in jobwatch", timeout_s: 30) do
      completed = @api.jobs(state: "completed").map { |job| job["externalId"] }
      (jids + [spanning]) - completed == []
    end
    assert_equal %w[queued active completed], history(@api.job(spanning))
    jids.each { |jid| assert_equal %w[queued active completed], history(@api.job(jid)), jid }
  end

  def test_nothing_is_lost_while_jobwatch_is_down
    spanning = SleepyJob.perform_async(3)
    wait_state(spanning, "active")
    @cluster.stop_jobwatch
    down_at = Time.now.to_f
    jids = Array.new(20) { |i| SucceedJob.perform_async(i) }
    E2E.wait_for("Sidekiq to run the 21 jobs") { (jids + [spanning]).all? { |jid| @cluster.done?(jid) } }
    E2E.wait_for("the collector to spool the events") { @cluster.spooled_events >= 60 }
    sleep 0.1 until Time.now.to_f > down_at + 3
    @cluster.start_jobwatch
    @api.call("POST", "/api/auth/login", E2E::ADMIN)
    E2E.wait_for("all 21 jobs completed in jobwatch", timeout_s: 30) do
      ((jids + [spanning]) - @api.jobs(state: "completed").map { |job| job["externalId"] }).empty?
    end
    job = @api.job(spanning)
    assert_equal %w[queued active completed], history(job)
    assert_operator job["durationMs"], :>=, 2900
    E2E.wait_for("the spool to be drained") { @cluster.spooled_events.zero? }
  end

  def test_revoke_of_a_queued_job_deletes_it_from_its_sidekiq_queue
    jid = SucceedJob.set(queue: "parked").perform_async("never")
    job = wait_state(jid, "queued")
    assert_equal 1, Sidekiq::Queue.new("parked").count { |entry| entry.jid == jid }
    assert_equal "cancelled", @api.call("POST", "/api/jobs/#{job["id"]}/revoke")["state"]
    detail = E2E.wait_for("the revoke acknowledged") { command_status(jid, "done") }
    assert_nil Sidekiq::Queue.new("parked").find_job(jid)
    assert_equal "cancelled", detail["state"]
    E2E.wait_for("Sidekiq's deletion recorded") { (@api.job(jid)["extensions"]["reason"] || "").include?("deleted from Sidekiq queue parked") }
  end

  def test_revoke_of_a_running_job_is_refused_the_job_shows_active_again_with_the_reason_and_its_retry_does_not_run
    jid = SlowFailJob.perform_async(6)
    job = wait_state(jid, "active")
    # not offered: open-source Sidekiq cannot stop a running job; the contract's answer still stands if asked
    assert_equal({ "available" => false, "reason" => "open-source Sidekiq cannot stop a running job safely" }, job["actions"]["revoke"])
    assert_equal "cancelled", @api.call("POST", "/api/jobs/#{job["id"]}/revoke")["state"]
    detail = E2E.wait_for("the revoke acknowledged failed") { command_status(jid, "failed") }
    reason = detail["lastCommand"]["reason"]
    assert_match(/cannot stop a running job safely/, reason)
    # the run goes on: jobwatch shows what Sidekiq does, with the refusal in the history
    assert_equal "active", detail["state"]
    assert_equal ["queued", "active", "active (revoke requested)", "active (revoke refused: #{reason})"], history(detail, notes: true)
    listed = @api.jobs(state: "active").find { |item| item["externalId"] == jid }
    assert_equal({ "type" => "revoke", "status" => "failed" }, listed["lastCommand"].slice("type", "status"))
    # the run fails, Sidekiq schedules its retry, and the middleware skips it before it starts
    skipped = E2E.wait_for("the retry skipped as revoked", timeout_s: 30) do
      found = @api.job(jid)
      found if found["state"] == "cancelled" && found["extensions"]["reason"] == "revoked from jobwatch before it started"
    end
    assert_equal %w[queued active retrying queued cancelled], history(skipped)
    assert_equal ["revoke requested", "revoke refused: #{reason}"], skipped["stateHistory"].filter_map { |entry| entry["note"] }
    sleep 1
    assert_nil Sidekiq::RetrySet.new.find_job(jid)
    assert_nil Sidekiq::DeadSet.new.find_job(jid)
  end

  def test_retry_of_a_dead_job_moves_it_back_to_its_queue_and_it_runs
    flag = File.join(@cluster.tmp, "flag-#{rand(1 << 30)}")
    jid = NeedsFileJob.perform_async(flag)
    job = wait_state(jid, "failed")
    E2E.wait_for("the job in Sidekiq's dead set") { Sidekiq::DeadSet.new.find_job(jid) }
    File.write(flag, "")
    assert_equal "retrying", @api.call("POST", "/api/jobs/#{job["id"]}/retry")["state"]
    done = wait_state(jid, "completed")
    assert_equal "done", done["lastCommand"]["status"]
    assert_equal "retry", done["lastCommand"]["type"]
    assert_nil Sidekiq::DeadSet.new.find_job(jid)
    assert_equal %w[queued active failed retrying queued active completed], history(done)
  end

  def test_a_job_whose_retry_option_is_40_nested_arrays_costs_no_event_of_the_20_jobs_around_it
    nested = 1
    40.times { nested = [nested] }
    before = Array.new(10) { |i| SucceedJob.perform_async(i) }
    deep = SucceedJob.set(retry: nested).perform_async("deep") # the app's value, copied into the job's extensions
    after = Array.new(10) { |i| SucceedJob.perform_async(i) }
    jids = before + [deep] + after
    E2E.wait_for("all 21 jobs completed in jobwatch", timeout_s: 30) { (jids - @api.jobs(state: "completed").map { |job| job["externalId"] }).empty? }
    kept = @api.job(deep)["extensions"]["retry"]
    7.times { kept = kept[0] }
    assert_equal "…[truncated: deeper than 8 levels]", kept
    # what jobwatch refused and the collector dropped (not "Connection refused" from the test that stops jobwatch)
    refute_match(/jobwatch refused|dropped/, @cluster.collector.output)
  end

  def test_a_revoke_outside_what_the_collector_watches_or_reported_is_refused_and_touches_nothing
    # a list that looks like a Sidekiq queue but is none of Sidekiq's (not in its `queues` set)
    Sidekiq.redis { |conn| conn.lpush("queue:secret", JSON.generate("class" => "SucceedJob", "args" => [1], "jid" => "secret-1", "queue" => "secret")) }
    forged = { "secret-1" => "secret", "never-seen-1" => "default", "forged\nFORGED line: the collector stopped" => "default" }
    forged.each do |jid, queue|
      event = { "type" => "job_state_change", "timestamp" => Time.now.utc.iso8601(3), "framework" => "sidekiq", "connectionId" => connection_id,
                "job" => { "externalId" => jid, "name" => "SucceedJob", "queue" => queue, "state" => "queued" } }
      assert_equal 1, @api.ingest(@cluster.api_key, [event])["accepted"]
      job = E2E.wait_for("the forged job #{jid.inspect} listed") { @api.job(jid) }
      @api.call("POST", "/api/jobs/#{job["id"]}/revoke")
    end
    secret = E2E.wait_for("the revoke in an unwatched queue refused") { command_status("secret-1", "failed") }
    assert_match(/queue "secret" is not one of Sidekiq's queues \(in its `queues` set or consumed by a live process\)/, secret["lastCommand"]["reason"])
    assert_equal 1, Sidekiq.redis { |conn| conn.llen("queue:secret") }
    unseen = E2E.wait_for("the revoke of a job nobody has refused") { command_status("never-seen-1", "failed") }
    assert_match(/not a job this collector reported, and Sidekiq has no job "never-seen-1"/, unseen["lastCommand"]["reason"])
    assert_equal 0, Sidekiq.redis { |conn| conn.exists("jobwatch:sidekiq:revoked:never-seen-1") }
    E2E.wait_for("the revoke of an id with a newline refused") { command_status(forged.keys.last, "failed") }
    assert_includes @cluster.collector.output, "revoke of job forged\\nFORGED line: the collector stopped -> failed"
    assert_empty @cluster.collector.output.lines.grep(/\AFORGED/)
  end

  def test_retry_of_a_job_whose_jid_holds_glob_characters_finds_it_literally
    flag = File.join(@cluster.tmp, "flag-glob-#{rand(1 << 30)}")
    jid = "glob[1]*?\\#{rand(1 << 30)}"
    Sidekiq::Client.push("class" => NeedsFileJob, "args" => [flag], "jid" => jid)
    job = wait_state(jid, "failed")
    E2E.wait_for("the job in Sidekiq's dead set") { Sidekiq::DeadSet.new.any? { |entry| entry.jid == jid } }
    File.write(flag, "")
    @api.call("POST", "/api/jobs/#{job["id"]}/retry")
    done = wait_state(jid, "completed")
    assert_equal %w[retry done], [done["lastCommand"]["type"], done["lastCommand"]["status"]]
  end

  def test_the_spool_directory_is_the_collectors_alone
    wait_state(SucceedJob.perform_async("checkpointed"), "completed")
    E2E.wait_for("the stream checkpoint written") { File.exist?(File.join(@cluster.spool_dir, "stream-checkpoint.json")) }
    assert_equal 0o700, File.stat(@cluster.spool_dir).mode & 0o777
    assert_equal 0o600, File.stat(File.join(@cluster.spool_dir, "stream-checkpoint.json")).mode & 0o777
  end

  def test_queue_snapshots_report_depth_and_consumers
    3.times { SucceedJob.set(queue: "idle-queue").perform_async(1) }
    # jobwatch counts the queued jobs before the collector's first snapshot of the queue arrives with its extensions
    queue = E2E.wait_for("the idle queue's snapshot with depth 3") { @api.queues.find { |q| q["name"] == "idle-queue" && q["depth"] == 3 && q["extensions"].key?("latencyMs") } }
    assert_equal 0, queue["consumers"]
    assert_equal false, queue["extensions"]["paused"], "open-source Sidekiq pauses no queue"
    default = @api.queues.find { |q| q["name"] == "default" }
    assert_operator default["consumers"], :>=, 1
  end

  # The controls from jobwatch's routes through the real collector to Sidekiq, and the
  # outcome shown where it was asked.

  def test_a_job_waiting_in_the_retry_set_retried_now_from_jobwatch_shows_queued_then_runs
    flag = File.join(@cluster.tmp, "flag-retry-now-#{rand(1 << 30)}")
    jid = WaitsToRetryJob.perform_async(flag)
    job = wait_state(jid, "retrying")
    File.write(flag, "")
    @api.call("POST", "/api/jobs/#{job["id"]}/retry", nil, expect: [200, 202])
    done = wait_state(jid, "completed")
    assert_equal %w[retry done], done["lastCommand"].values_at("type", "status")
    assert_equal %w[queued active retrying queued active completed], history(done)
    assert_nil Sidekiq::RetrySet.new.find_job(jid)
  end

  def test_a_dead_job_deleted_from_jobwatch_leaves_sidekiqs_dead_set
    jid = NeedsFileJob.perform_async(File.join(@cluster.tmp, "never-#{rand(1 << 30)}"))
    job = wait_state(jid, "failed")
    E2E.wait_for("the job in Sidekiq's dead set") { Sidekiq::DeadSet.new.find_job(jid) }
    @api.call("POST", "/api/jobs/#{job["id"]}/delete", nil, expect: 202)
    detail = E2E.wait_for("the delete acknowledged") { command_status(jid, "done") }
    assert_equal "delete", detail["lastCommand"]["type"]
    assert_nil Sidekiq::DeadSet.new.find_job(jid)
  end

  def test_a_process_quieted_from_jobwatch_stops_fetching_and_the_worker_shows_it
    process = @cluster.start_sidekiq("sidekiq-quieted", queues: %w[quieted], concurrency: 1)
    identity = @cluster.sidekiq_process_of(process.pid)["identity"]
    worker = E2E.wait_for("the worker in jobwatch") { @api.workers.find { |w| w["externalId"] == identity } }
    @api.call("POST", "/api/workers/#{worker["id"]}/quiet", nil, expect: 202)
    E2E.wait_for("Sidekiq's process to beat as quiet", timeout_s: 30) { @cluster.sidekiq_process_of(process.pid)&.[]("quiet") == "true" }
    assert_includes process.output, "Received TSTP, no longer accepting new work"
    shown = E2E.wait_for("the quiet's outcome on the worker", timeout_s: 30) { latest_command(@api.workers.find { |w| w["externalId"] == identity }, "done") }
    assert_equal "worker.quiet", shown["type"]
    jid = SucceedJob.set(queue: "quieted").perform_async("not fetched")
    sleep 2
    assert_equal [jid], Sidekiq::Queue.new("quieted").map(&:jid), "a quiet process fetches nothing"
  ensure
    process&.stop("TERM")
  end

  def test_pausing_a_sidekiq_queue_is_disabled_with_the_reason_and_asked_anyway_answered_unsupported
    SucceedJob.set(queue: "pausable").perform_async(1)
    # not paused, as the collector's snapshot says (open-source Sidekiq pauses no queue)
    queue = E2E.wait_for("the queue's snapshot, not paused") { @api.queues.find { |q| q["name"] == "pausable" && q["paused"] == false } }
    reason = "pausing a queue is a Sidekiq Pro/Enterprise feature: open-source Sidekiq has no paused queues"
    assert_equal({ "available" => false, "reason" => reason }, queue["controls"]["queue.pause"], "the collector's capabilities, as the dashboard reads them")
    @api.call("POST", "/api/queues/#{queue["id"]}/pause", nil, expect: 202)
    shown = E2E.wait_for("the pause's outcome on the queue") { latest_command(@api.queues.find { |q| q["name"] == "pausable" }, "unsupported") }
    assert_equal ["queue.pause", reason], shown.values_at("type", "reason")
    assert_equal 1, Sidekiq::Queue.new("pausable").size
  end

  def test_a_queue_emptied_from_jobwatch_is_cleared_in_sidekiq_its_jobs_cancelled_and_the_count_shown
    jids = Array.new(4) { |i| SucceedJob.set(queue: "emptied").perform_async(i) }
    queue = E2E.wait_for("the queue's snapshot with depth 4") { @api.queues.find { |q| q["name"] == "emptied" && q["depth"] == 4 && q["extensions"].key?("paused") } }
    @api.call("POST", "/api/queues/#{queue["id"]}/clean", { "mode" => "waiting" }, expect: 202)
    shown = E2E.wait_for("the clean's outcome on the queue") { latest_command(@api.queues.find { |q| q["name"] == "emptied" }, "done") }
    assert_equal ["queue.clean", { "removed" => 4 }], shown.values_at("type", "details")
    assert_equal 0, Sidekiq::Queue.new("emptied").size
    jids.each { |jid| wait_state(jid, "cancelled") }
    E2E.wait_for("the queue's depth 0") { @api.queues.find { |q| q["name"] == "emptied" && q["depth"].zero? } }
  end

  private

  # The newest command of a queue's or worker's view, once its status is `status`.
  def latest_command(view, status)
    latest = view && Array(view["commands"]).first
    latest if latest && latest["status"] == status
  end

  def wait_state(jid, state, timeout_s: 20)
    E2E.wait_for("job #{jid} to be #{state} in jobwatch", timeout_s: timeout_s) do
      job = @api.job(jid)
      job if job && job["state"] == state
    end
  end

  def connection_id
    @connection_id ||= @api.call("GET", "/api/connections")["data"].find { |connection| connection["name"] == "sidekiq-e2e" }["id"]
  end

  def command_status(jid, status)
    job = @api.job(jid)
    job if job && job["lastCommand"] && job["lastCommand"]["status"] == status
  end

  # The states the job went through (an entry with a note may repeat the state before it); with `notes`,
  # every entry, those of its revokes and retries as "state (note)".
  def history(job, notes: false)
    return job["stateHistory"].map { |entry| entry["note"] ? "#{entry["state"]} (#{entry["note"]})" : entry["state"] } if notes
    job["stateHistory"].map { |entry| entry["state"] }.chunk_while { |a, b| a == b }.map(&:first)
  end

  def iso_s(text)
    Time.iso8601(text).to_f
  end
end
