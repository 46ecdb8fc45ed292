require_relative "test_helper"
require "minitest/mock"
require "sidekiq"
require "sidekiq/api"
require "jobwatch/sidekiq/collector/commands"
require_relative "../support/fake_jobwatch"

# What the collector answers for each control before it touches Sidekiq: the
# capabilities it reports, the unsupported answers, the input it refuses, and how a
# command that waits for Sidekiq to act is acknowledged. What each control does in
# Sidekiq is tested against a real Redis and Sidekiq process (test/e2e).
class CommandControlsTest < Minitest::Test
  include UnitHelpers
  C = Jobwatch::Sidekiq::Collector
  PROTOCOL_TYPES = %w[revoke retry promote delete kill queue.pause queue.resume queue.clean queue.retry_failed
                      queue.concurrency task.rate_limit worker.quiet worker.stop worker.pool].freeze
  NO_REDIS = ->(*) { raise Minitest::Assertion, "Redis was asked" }

  def commands_for(jobwatch, **options)
    C::Commands.new(client: jobwatch, logger: logger, recorder: nil, **options)
  end

  def test_the_capabilities_name_every_control_of_the_protocol_and_why_sidekiq_cannot_do_some
    body = C::Capabilities.body
    assert_equal "sidekiq", body["framework"]
    assert_equal Jobwatch::Sidekiq::VERSION, body["agentVersion"]
    assert_equal PROTOCOL_TYPES.sort, body["controls"].keys.sort
    supported = body["controls"].select { |_, answer| answer == { "supported" => true } }.keys
    assert_equal %w[revoke retry promote delete kill queue.clean queue.retry_failed worker.quiet worker.stop].sort, supported.sort
    refused = body["controls"].reject { |type, _| supported.include?(type) }
    refused.each_value { |answer| assert_equal [false, String], [answer["supported"], answer["reason"].class] }
    assert_match(/Sidekiq Pro\/Enterprise/, refused["queue.pause"]["reason"])
    assert_equal refused["queue.pause"], refused["queue.resume"]
    assert_match(/no per-queue concurrency/, refused["queue.concurrency"]["reason"])
    assert_match(/no rate limits/, refused["task.rate_limit"]["reason"])
    assert_match(/cannot change its concurrency while it runs/, refused["worker.pool"]["reason"])
  end

  def test_capabilities_are_reported_at_start_and_again_after_an_outage_only
    jobwatch = FakeJobwatch.new
    runner = commands_for(jobwatch)
    runner.step
    runner.step
    assert_equal 1, jobwatch.capabilities.size
    assert_equal C::Capabilities.body, jobwatch.capabilities.first
    jobwatch.down = true
    runner.step
    jobwatch.down = false
    runner.step
    runner.step
    assert_equal 2, jobwatch.capabilities.size
    assert_match(/capabilities reported to jobwatch: 9 controls supported, 5 answered unsupported/, logged)
  end

  def test_a_jobwatch_without_the_capabilities_route_still_gets_its_commands_answered
    jobwatch = FakeJobwatch.new([{ "id" => "p", "type" => "queue.pause", "queue" => "default" }])
    jobwatch.capabilities_status = 404
    runner = commands_for(jobwatch)
    runner.step
    runner.step
    assert_equal 1, jobwatch.capabilities.size
    assert_equal "unsupported", jobwatch.outcomes["p"]["status"]
    assert_equal 1, logged.scan("does not take an agent's capabilities").size
  end

  def test_each_control_sidekiq_cannot_do_is_answered_unsupported_with_the_reported_reason_touching_nothing
    refused = C::Capabilities.body["controls"].reject { |_, answer| answer["supported"] }
    jobwatch = FakeJobwatch.new(refused.keys.map { |type| { "id" => type, "type" => type, "queue" => "default", "name" => "T", "params" => {} } })
    Sidekiq.stub(:redis, NO_REDIS) { commands_for(jobwatch).step }
    refused.each do |type, answer|
      assert_equal({ "id" => type, "status" => "unsupported", "reason" => answer["reason"] }, jobwatch.outcomes[type], type)
    end
  end

  def test_a_clean_of_finished_jobs_is_unsupported_and_one_without_a_mode_is_refused_before_redis
    runner = commands_for(FakeJobwatch.new)
    finished, nameless = Sidekiq.stub(:redis, NO_REDIS) do
      [runner.execute("id" => "f", "type" => "queue.clean", "queue" => "default", "params" => { "mode" => "finished", "olderThanMs" => 1 }),
       runner.execute("id" => "n", "type" => "queue.clean", "queue" => "default")]
    end
    assert_equal "unsupported", finished.status
    assert_match(/Sidekiq keeps no finished jobs/, finished.reason)
    assert_equal ["failed", 'params.mode must be "waiting" or "finished", not "": nothing was done'], [nameless.status, nameless.reason]
  end

  def test_queue_names_and_process_identities_that_are_none_are_refused_before_any_redis_key_is_built
    runner = commands_for(FakeJobwatch.new)
    outcomes = Sidekiq.stub(:redis, NO_REDIS) do
      [
        runner.execute("id" => "a", "type" => "queue.clean", "queue" => "de\nfault", "params" => { "mode" => "waiting" }),
        runner.execute("id" => "b", "type" => "queue.retry_failed", "queue" => nil),
        runner.execute("id" => "c", "type" => "queue.retry_failed", "queue" => "q" * 256),
        runner.execute("id" => "d", "type" => "worker.quiet", "workerId" => "host:1:abc\e[2J"),
        runner.execute("id" => "e", "type" => "worker.stop", "workerId" => 42),
        runner.execute("id" => "f", "type" => "worker.stop", "workerId" => "#{"h" * 500}…[truncated]"),
        runner.execute("id" => "g", "type" => "kill", "externalId" => "j\u0000"),
        runner.execute("id" => "h", "type" => "promote", "externalId" => "j", "queue" => ""),
      ]
    end
    assert_equal %w[failed] * 8, outcomes.map(&:status)
    assert(outcomes[0, 3].all? { |outcome| outcome.reason.start_with?("not a Sidekiq queue name") })
    assert(outcomes[3, 2].all? { |outcome| outcome.reason.start_with?("not a Sidekiq process identity") })
    assert_includes outcomes[5].reason, "cut to 512 characters"
    assert outcomes[6].reason.start_with?("not a Sidekiq job id")
    assert outcomes[7].reason.start_with?("not a Sidekiq queue name")
  end

  # Answers WAITING for the first `waits` checks of each command, then done.
  class SlowProcesses
    attr_reader :checks

    def initialize(waits)
      @waits = waits
      @checks = Hash.new(0)
    end

    def carry_out(id, _type, _command)
      @checks[id] += 1
      @checks[id] > @waits ? C::CommandOutcome.done(id, "the process has stopped") : C::WAITING
    end
  end

  def test_a_command_waiting_for_a_process_to_act_is_not_acknowledged_and_holds_up_no_other
    jobwatch = FakeJobwatch.new([{ "id" => "stop", "type" => "worker.stop", "workerId" => "h:1:a" },
                                 { "id" => "pause", "type" => "queue.pause", "queue" => "default" }])
    processes = SlowProcesses.new(2)
    runner = commands_for(jobwatch, processes: processes)
    assert_equal 1, runner.step
    assert_equal ["pause"], jobwatch.acks.flatten.map { |outcome| outcome["id"] }
    assert_equal 0, runner.step
    assert_equal 1, runner.step
    assert_equal({ "id" => "stop", "status" => "done", "reason" => "the process has stopped" }, jobwatch.outcomes["stop"])
    assert_equal 3, processes.checks["stop"]
    assert_empty jobwatch.commands
    assert_equal 1, logged.scan("worker.stop of process h:1:a -> done").size
  end

  def test_an_outcome_carries_its_details
    outcome = C::CommandOutcome.done("c", nil, details: { "removed" => 1204 })
    assert_equal({ "id" => "c", "status" => "done", "details" => { "removed" => 1204 } }, outcome.to_json_hash)
  end

  # A Sidekiq process record as ProcessSet yields it, which records the signals sent to it.
  class FakeProcess
    attr_reader :signals

    def initialize(identity, quiet: "false")
      @attributes = { "identity" => identity, "quiet" => quiet }
      @signals = []
    end

    def [](key)
      @attributes[key]
    end

    def quiet!
      @signals << "TSTP"
    end

    def stop!
      @signals << "TERM"
    end
  end

  # A connection whose signal list still holds what was pushed, or not (the process took it).
  class SignalListConnection
    attr_reader :calls

    def initialize(still_listed)
      @still_listed = still_listed
      @calls = []
    end

    def call(*command)
      @calls << command
      @still_listed ? 1 : 0
    end
  end

  def process_controls(processes, connection, clock)
    controls = C::ProcessControls.new(logger: logger, wait_s: 30, clock: -> { clock[0] })
    run = lambda do |command|
      ::Sidekiq::ProcessSet.stub(:new, processes) { ::Sidekiq.stub(:redis, ->(&block) { block.call(connection) }) { controls.carry_out(command["id"], command["type"], command) } }
    end
    run
  end

  def test_a_signal_the_process_does_not_take_within_the_wait_is_withdrawn_and_answered_failed
    process = FakeProcess.new("host:7:abc")
    connection = SignalListConnection.new(true)
    clock = [100.0]
    run = process_controls([process], connection, clock)
    command = { "id" => "q", "type" => "worker.quiet", "workerId" => "host:7:abc" }
    assert_equal C::WAITING, run.call(command)
    assert_equal ["TSTP"], process.signals
    clock[0] = 129.9
    assert_equal C::WAITING, run.call(command)
    clock[0] = 130.0
    outcome = run.call(command)
    assert_equal ["LREM", "host:7:abc-signals", "1", "TSTP"], connection.calls.last
    assert_equal "failed", outcome.status
    assert_match(/did not take the TSTP signal within 30s .*withdrawn, nothing was done/, outcome.reason)
    assert_equal ["TSTP"], process.signals, "sent once, not again while waiting"
  end

  def test_a_stop_the_process_took_but_has_not_finished_is_done_with_that_said
    process = FakeProcess.new("host:8:abc", quiet: "true")
    clock = [0.0]
    run = process_controls([process], SignalListConnection.new(false), clock)
    command = { "id" => "s", "type" => "worker.stop", "workerId" => "host:8:abc" }
    assert_equal C::WAITING, run.call(command)
    clock[0] = 31
    outcome = run.call(command)
    assert_equal "done", outcome.status
    assert_match(/took the stop signal and is finishing its running jobs/, outcome.reason)
  end

  def test_a_quiet_is_done_when_the_process_beats_quiet_and_a_stop_when_it_has_left
    process = FakeProcess.new("host:9:abc")
    processes = [process]
    run = process_controls(processes, SignalListConnection.new(true), [0.0])
    assert_equal C::WAITING, run.call("id" => "q", "type" => "worker.quiet", "workerId" => "host:9:abc")
    processes[0] = FakeProcess.new("host:9:abc", quiet: "true")
    assert_equal ["done", nil], run.call("id" => "q", "type" => "worker.quiet", "workerId" => "host:9:abc").to_a[1, 2]
    assert_equal C::WAITING, run.call("id" => "s", "type" => "worker.stop", "workerId" => "host:9:abc")
    processes.clear
    assert_equal ["done", "the process has stopped"], run.call("id" => "s", "type" => "worker.stop", "workerId" => "host:9:abc").to_a[1, 2]
    assert_equal ["failed", "not found"], run.call("id" => "s2", "type" => "worker.stop", "workerId" => "host:9:abc").then { |o| [o.status, o.reason[0, 9]] }
  end

  def test_a_quiet_of_a_quiet_process_sends_nothing
    process = FakeProcess.new("host:1:abc", quiet: "true")
    outcome = process_controls([process], SignalListConnection.new(true), [0.0]).call("id" => "q", "type" => "worker.quiet", "workerId" => "host:1:abc")
    assert_equal ["done", "the process was already quiet"], [outcome.status, outcome.reason]
    assert_empty process.signals
  end
end
