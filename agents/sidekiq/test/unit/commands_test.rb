require_relative "test_helper"
require "minitest/mock"
require "sidekiq"
require "sidekiq/api"
require "jobwatch/sidekiq/collector/commands"
require_relative "../support/fake_jobwatch"

class CommandsTest < Minitest::Test
  include UnitHelpers
  C = Jobwatch::Sidekiq::Collector

  # Carries out nothing in Sidekiq: counts what it was asked to do.
  class CountingCommands < C::Commands
    attr_reader :executed

    def execute(command)
      (@executed ||= []) << command["id"]
      Outcome.new(command["id"], "done", nil)
    end
  end

  def commands(count)
    Array.new(count) { |i| { "id" => "c#{i}", "type" => "revoke", "externalId" => "j#{i}" } }
  end

  def test_outcomes_are_acknowledged_in_requests_of_twenty
    jobwatch = FakeJobwatch.new(commands(45))
    runner = CountingCommands.new(client: jobwatch, logger: logger, recorder: nil)
    assert_equal 45, runner.step
    assert_equal [20, 20, 5], jobwatch.acks.map(&:size)
  end

  def test_a_command_whose_ack_was_lost_is_not_carried_out_twice
    jobwatch = FakeJobwatch.new(commands(2))
    runner = CountingCommands.new(client: jobwatch, logger: logger, recorder: nil)
    jobwatch.ack_down = true
    assert_equal 0, runner.step
    jobwatch.ack_down = false
    assert_equal 2, runner.step
    assert_equal %w[c0 c1], runner.executed
    assert_equal [%w[done done]], jobwatch.acks.map { |ack| ack.map { |o| o["status"] } }
    assert_match(/ack of 2 commands failed/, logged)
  end

  def test_an_unknown_command_type_is_answered_unsupported_with_the_reason_and_touches_nothing
    jobwatch = FakeJobwatch.new([{ "id" => "x", "type" => "pause", "externalId" => "j" }, { "id" => "y", "type" => "x" * 500 }])
    Sidekiq.stub(:redis, ->(*) { flunk "Redis was asked" }) { C::Commands.new(client: jobwatch, logger: logger, recorder: nil).step }
    assert_equal({ "id" => "x", "status" => "unsupported", "reason" => "this agent version does not know 'pause'" }, jobwatch.outcomes["x"])
    assert_equal "this agent version does not know '#{"x" * 100}'", jobwatch.outcomes["y"]["reason"]
  end

  def test_a_sidekiq_error_is_acknowledged_failed_not_raised
    runner = C::Commands.new(client: FakeJobwatch.new([]), logger: logger, recorder: nil)
    outcome = Sidekiq.stub(:redis, ->(*) { raise ArgumentError, "ERR wrong type" }) { runner.execute("id" => "r", "type" => "retry", "externalId" => "j") }
    assert_equal ["failed", "Sidekiq error: ArgumentError: ERR wrong type"], [outcome.status, outcome.reason]
  end

  def test_while_redis_is_unreachable_commands_stay_unacknowledged_and_come_back
    jobwatch = FakeJobwatch.new(commands(2).map { |command| command.merge("type" => "retry") })
    runner = C::Commands.new(client: jobwatch, logger: logger, recorder: nil)
    assert_equal 0, Sidekiq.stub(:redis, ->(*) { raise Errno::ECONNREFUSED, "redis" }) { runner.step }
    assert_empty jobwatch.acks
    assert_equal 2, jobwatch.commands.size
    assert_match(/not carried out now .*will try again/, logged)
  end

  def test_a_long_reason_is_cut_to_what_the_ack_accepts
    outcome = C::Commands::Outcome.new("x", "failed", "r" * 5000)
    assert_equal 1000, outcome.to_json_hash["reason"].size
  end

  def test_a_jid_or_queue_that_is_none_is_refused_before_any_redis_key_is_built
    runner = C::Commands.new(client: FakeJobwatch.new([]), logger: logger, recorder: nil)
    no_redis = ->(*) { flunk "Redis was asked" }
    outcomes = Sidekiq.stub(:redis, no_redis) do
      [
        runner.execute("id" => "a", "type" => "revoke", "externalId" => "j1\r\nforged"),
        runner.execute("id" => "b", "type" => "retry", "externalId" => "x" * 600),
        runner.execute("id" => "c", "type" => "revoke", "externalId" => nil),
        runner.execute("id" => "d", "type" => "revoke", "externalId" => "j1", "queue" => "de\u0000fault"),
        runner.execute("id" => "e", "type" => "revoke", "externalId" => "#{"x" * 500}…[truncated]"),
      ]
    end
    assert_equal %w[failed] * 5, outcomes.map(&:status)
    assert(outcomes.first(3).all? { |outcome| outcome.reason.start_with?("not a Sidekiq job id") })
    assert outcomes[3].reason.start_with?("not a Sidekiq queue name")
    assert_includes outcomes[4].reason, "cut to 512 characters"
  end

  def test_a_command_naming_another_queue_than_the_collector_reported_is_refused
    reported = C::ReportedJobs.new
    reported.learn([{ job: { externalId: "j1", queue: "default" } }])
    runner = C::Commands.new(client: FakeJobwatch.new([]), logger: logger, recorder: nil, reported: reported)
    outcome = Sidekiq.stub(:redis, ->(*) { flunk "Redis was asked" }) { runner.execute("id" => "a", "type" => "revoke", "externalId" => "j1", "queue" => "secret") }
    assert_equal "failed", outcome.status
    assert_includes outcome.reason, 'the command names queue "secret", but the collector reported the job in queue "default"'
  end

  def test_glob_characters_of_a_jid_are_escaped_for_a_literal_match
    assert_equal 'report\\[1\\]\\*\\?\\\\x', C::LiteralFind.glob_escape('report[1]*?\\x')
  end

  def test_reported_jobs_are_bounded_least_recently_reported_first
    reported = C::ReportedJobs.new(max: 2)
    reported.learn([{ job: { externalId: "a", queue: "q" } }, { job: { externalId: "b", queue: "q" } }, { "job" => { "externalId" => "c" } }])
    assert_equal [false, true, true], %w[a b c].map { |jid| reported.reported?(jid) }
    assert_nil reported.queue_of("c")
  end
end
