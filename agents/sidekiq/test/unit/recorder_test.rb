require_relative "test_helper"
require "jobwatch/sidekiq/recorder"

class RecorderTest < Minitest::Test
  include UnitHelpers
  Recorder = Jobwatch::Sidekiq::Recorder

  class FakeConnection
    attr_reader :calls
    attr_accessor :failing

    def initialize
      @calls = []
    end

    def call(*command)
      raise IOError, "Redis went away" if failing
      @calls << command
      "1-#{@calls.size}"
    end
  end

  def setup
    @conn = FakeConnection.new
    @now = 0.0
    @recorder = Recorder.new(stream: "s", max_length: 5000, redis: ->(&block) { block.call(@conn) }, logger: logger, clock: -> { @now })
  end

  def test_a_record_is_one_bounded_xadd_of_its_json
    assert_equal "1-1", @recorder.record("k" => "started")
    assert_equal [["XADD", "s", "MAXLEN", "~", "5000", "*", "e", '{"k":"started"}']], @conn.calls
  end

  def test_a_failing_redis_never_raises_and_is_left_alone_for_a_pause
    @conn.failing = true
    assert_nil @recorder.record("k" => "started")
    @conn.failing = false
    assert_nil @recorder.record("k" => "succeeded"), "within the pause nothing is tried"
    assert_empty @conn.calls
    assert_equal 2, @recorder.dropped
    @now += Recorder::PAUSE_AFTER_FAILURE_S + 0.1
    refute_nil @recorder.record("k" => "started")
    assert_equal 1, logged.scan(/could not record a job event/).size, "one log line per outage"
  end

  def test_a_record_that_cannot_be_encoded_is_dropped_not_raised
    assert_nil @recorder.record("k" => "\xff".dup.force_encoding("BINARY"))
    assert_equal 1, @recorder.dropped
    refute_nil @recorder.record("k" => "started"), "Redis is fine: the next record goes in"
  end
end
