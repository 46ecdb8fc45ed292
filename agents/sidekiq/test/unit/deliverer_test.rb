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
      if reply == 200 && @bodies.last["events"].any? { |event| event["poison"] }
        # what jobwatch does with a body nested too deep: the whole request is refused
        return C::Response.new(400, { "error" => { "code" => "VALIDATION_ERROR", "message" => "request body must not nest more than 32 levels deep" } }, nil)
      end
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
    range.map { |n| { "type" => "job_state_change", "timestamp" => format("2026-11-20T10:00:00.%03dZ", n), "job" => { "externalId" => "jid-#{n}", "state" => "queued" }, "n" => n } }
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
    jobwatch = FakeJobwatch.new(503, 401)
    subject = deliverer(jobwatch)
    subject.deliver(events(1..2))
    assert_equal 2, subject.pending
    @now += 60
    subject.drain
    assert_equal 0, subject.pending
    assert_equal 2, subject.dropped_refused
    assert_match(/refused a batch with 401 .* dropped 2 events/, logged)
  end

  def test_a_batch_refused_whole_is_sent_again_in_halves_and_only_the_refused_event_is_dropped_and_named
    jobwatch = FakeJobwatch.new
    batch = events(0..95)
    batch[41]["poison"] = true
    subject = deliverer(jobwatch)
    subject.deliver(batch)
    delivered = jobwatch.bodies.reject { |body| body["events"].any? { |event| event["poison"] } }.flat_map { |body| body["events"] }
    assert_equal (0..95).to_a - [41], delivered.map { |event| event["n"] }.sort
    assert_equal [1, 0], [subject.dropped_refused, subject.pending]
    assert_operator jobwatch.bodies.size, :<=, 1 + 2 * 7, "the whole, then a refused half and its sibling per level"
    assert_match(/jobwatch refused a batch of 96 events with 400 \(VALIDATION_ERROR: request body must not nest more than 32 levels deep\); sending it again in halves/, logged)
    assert_match(/jobwatch refused event job_state_change jid-41 \(queued\) at 2026-11-20T10:00:00.041Z with 400 .*dropped this event only; 1 events dropped this way since start/, logged)
  end

  def test_many_refused_events_are_each_dropped_alone_the_first_named_and_the_rest_counted
    jobwatch = FakeJobwatch.new
    batch = events(0..59)
    batch.each_with_index { |event, index| event["poison"] = true if index.even? }
    subject = deliverer(jobwatch)
    subject.deliver(batch)
    assert_equal 30, subject.dropped_refused
    assert_equal 20, logged.scan("dropped this event only").size
    assert_match(/\.\.\. and 10 more events of the batch refused and dropped/, logged)
  end

  def test_an_outage_in_the_middle_of_a_split_keeps_the_whole_batch_in_the_spool
    jobwatch = FakeJobwatch.new(200, 200, :down) # the whole (refused), its first half (refused), then the network is gone
    batch = events(0..7)
    batch[1]["poison"] = true
    subject = deliverer(jobwatch)
    subject.deliver(batch)
    assert_equal [8, 0], [subject.pending, subject.dropped_refused]
    @now += 60
    subject.drain
    assert_equal [0, 1], [subject.pending, subject.dropped_refused]
    delivered = jobwatch.bodies.reject { |body| body["events"].any? { |event| event["poison"] } }.flat_map { |body| body["events"] }
    assert_equal [0, 2, 3, 4, 5, 6, 7], delivered.map { |event| event["n"] }.uniq.sort
  end

  def test_an_event_json_cannot_write_is_dropped_and_named_and_the_others_go
    jobwatch = FakeJobwatch.new
    subject = deliverer(jobwatch)
    subject.deliver([events(0..0).first.merge("bad" => "\xff".b.force_encoding("UTF-8")), events(1..1).first])
    assert_equal [1], jobwatch.events.map { |event| event["n"] }
    assert_match(/dropped event job_state_change jid-0 \(queued\) at 2026-11-20T10:00:00.000Z: it cannot be written as JSON/, logged)
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
    assert_match(/rejected event job_state_change jid-1 \(queued\) at 2026-11-20T10:00:00.001Z: VALIDATION_ERROR bad state/, logged)
    assert_match(/daily event limit: 1 events/, logged)
  end
end
