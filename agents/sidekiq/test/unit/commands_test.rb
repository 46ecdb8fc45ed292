require_relative "test_helper"
require "minitest/mock"
require "sidekiq"
require "sidekiq/api"
require "jobwatch/sidekiq/collector/commands"

class CommandsTest < Minitest::Test
  include UnitHelpers
  C = Jobwatch::Sidekiq::Collector

  class FakeJobwatch
    attr_reader :acks
    attr_accessor :commands, :ack_down

    def initialize(commands)
      @commands = commands
      @acks = []
    end

    def get(_path)
      C::Response.new(200, { "data" => @commands }, nil)
    end

    def post(_path, body)
      raise C::NetworkError, "reset" if ack_down
      @acks << body["outcomes"]
      @commands -= @commands.select { |command| body["outcomes"].any? { |o| o["id"] == command["id"] } }
      C::Response.new(200, { "acknowledged" => body["outcomes"].size }, nil)
    end
  end

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

  def test_an_unknown_command_type_is_acknowledged_failed_with_the_reason
    jobwatch = FakeJobwatch.new([{ "id" => "x", "type" => "pause", "externalId" => "j" }])
    C::Commands.new(client: jobwatch, logger: logger, recorder: nil).step
    assert_equal [{ "id" => "x", "status" => "failed", "reason" => "this collector does not know command type \"pause\"" }], jobwatch.acks.first
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
end
