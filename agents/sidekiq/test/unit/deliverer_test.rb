require_relative "test_helper"
require "json"
require "jobwatch/sidekiq/collector/deliverer"
require "jobwatch/sidekiq/collector/spool"

class DelivererTest < Minitest::Test
  include UnitHelpers
  C = Jobwatch::Sidekiq::Collector

  # Answers each ingest with the next scripted reply (an Integer status, a Response or :down).
  class FakeJobwatch
    attr_reader :bodies

    def initialize(*replies)
      @replies = replies
      @bodies = []
    end

    def get(_path)
      C::Response.new(200, { "connectionId" => "conn-1" }, nil)
    end

    def post(_path, body)
      reply = @replies.shift || 200
      raise C::NetworkError, "connection refused" if reply == :down
      @bodies << JSON.parse(body)
      return reply if reply.is_a?(C::Response)
      C::Response.new(reply, reply == 200 ? { "accepted" => JSON.parse(body)["events"].size } : { "error" => { "code" => "X", "message" => "no" } }, nil)
    end

    def events
      @bodies.flat_map { |body| body["events"] }
    end
  end

  def setup
    @now = 100.0
  end

  def deliverer(jobwatch, **options)
    @spool = C::Spool.new(tmpdir, 1 << 20, logger)
    C::Deliverer.new(client: jobwatch, spool: @spool, logger: logger, clock: -> { @now }, backoff: C::Backoff.new(random: Random.new(1)), **options)
  end

  def events(range)
    range.map { |n| { "type" => "job_state_change", "n" => n } }
  end

  def test_events_go_out_in_batches_with_the_keys_connection
    jobwatch = FakeJobwatch.new
    deliverer(jobwatch, batch_size: 2).deliver(events(1..5))
    assert_equal [2, 2, 1], jobwatch.bodies.map { |body| body["events"].size }
    assert_equal (1..5).to_a, jobwatch.events.map { |event| event["n"] }
    assert(jobwatch.events.all? { |event| event["connectionId"] == "conn-1" })
  end

  def test_while_jobwatch_is_down_events_are_spooled_and_later_sent_in_order
    jobwatch = FakeJobwatch.new(:down)
    subject = deliverer(jobwatch, batch_size: 2)
    subject.deliver(events(1..3))
    assert_equal 3, subject.pending, "the failed batch and the one behind it are on disk"
    subject.deliver(events(4..4))
    assert_equal 4, subject.pending, "new events queue behind the spool"
    assert_equal 4, subject.drain, "nothing is sent before the backoff is over"
    @now += 60
    assert_equal 0, subject.drain
    assert_equal (1..4).to_a, jobwatch.events.map { |event| event["n"] }
    assert_match(/jobwatch reachable again/, logged)
  end

  def test_a_429_or_5xx_is_retried_and_a_4xx_dropped_with_a_log_line
    jobwatch = FakeJobwatch.new(503, 400)
    subject = deliverer(jobwatch)
    subject.deliver(events(1..2))
    assert_equal 2, subject.pending
    @now += 60
    subject.drain
    assert_equal 0, subject.pending
    assert_equal 2, subject.dropped_refused
    assert_match(/refused a batch with 400 .* dropped 2 events/, logged)
  end

  def test_a_body_never_exceeds_the_byte_bound
    jobwatch = FakeJobwatch.new
    big = Array.new(4) { |n| { "n" => n, "pad" => "x" * 100 } }
    deliverer(jobwatch, body_bytes_max: 250).deliver(big)
    assert_equal [2, 2], jobwatch.bodies.map { |body| body["events"].size }
  end

  def test_rejected_and_truncated_events_are_logged_with_the_reason
    reply = C::Response.new(200, { "accepted" => 0, "rejected" => 1, "truncated" => 1,
                                   "errors" => [{ "index" => 0, "code" => "VALIDATION_ERROR", "message" => "bad state" }] }, nil)
    subject = deliverer(FakeJobwatch.new(reply))
    subject.deliver(events(1..2))
    assert_equal [1, 1], [subject.rejected, subject.truncated]
    assert_match(/rejected event 0: VALIDATION_ERROR bad state/, logged)
    assert_match(/daily event limit: 1 events/, logged)
  end
end
