require_relative "test_helper"
require "sidekiq"
require "sidekiq/api"
require "jobwatch/sidekiq/collector/poller"

# The poller's own choices that need no Redis: how a queue's latency and paused state are read.
class PollerTest < Minitest::Test
  include UnitHelpers
  C = Jobwatch::Sidekiq::Collector

  FakeQueue = Struct.new(:name, :result) do
    def latency
      result.is_a?(Exception) ? raise(result) : result
    end

    def paused?
      result.is_a?(Exception) ? raise(result) : result
    end
  end

  def poller
    @poller ||= C::Poller.new(deliverer: nil, logger: logger, stale_s: 20, set_scan_max: 100)
  end

  def test_a_readable_latency_is_passed_on
    assert_equal 2.5, poller.send(:latency_s, FakeQueue.new("mail", 2.5))
    assert_empty logged
  end

  def test_an_unparsable_oldest_job_leaves_the_latency_out_and_says_so_once_per_queue
    broken = FakeQueue.new("mail", JSON::ParserError.new("unexpected token"))
    3.times { assert_nil poller.send(:latency_s, broken) }
    assert_equal 1, logged.scan("queue mail: latency unreadable (JSON::ParserError: unexpected token)").size
    assert_equal 0.5, poller.send(:latency_s, FakeQueue.new("mail", 0.5))
    poller.send(:latency_s, broken)
    assert_equal 2, logged.scan("latency unreadable").size, "said again after it was readable in between"
  end

  def test_the_paused_state_is_sidekiqs_own_answer_and_left_out_when_unreadable
    assert_equal false, poller.send(:paused?, Sidekiq::Queue.new("mail")), "open-source Sidekiq: never paused"
    assert_equal true, poller.send(:paused?, FakeQueue.new("mail", true))
    assert_nil poller.send(:paused?, FakeQueue.new("mail", RuntimeError.new("Pro's Redis call failed")))
  end
end
