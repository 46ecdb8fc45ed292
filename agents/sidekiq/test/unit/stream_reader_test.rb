require_relative "test_helper"
require "json"
require "jobwatch/sidekiq/collector/stream_reader"

class StreamReaderTest < Minitest::Test
  include UnitHelpers
  C = Jobwatch::Sidekiq::Collector

  # Answers XREAD from a list of [id, record] entries and XINFO from a given hash.
  class FakeStream
    attr_accessor :entries, :info
    attr_reader :reads

    def initialize
      @entries = []
      @info = {}
      @reads = []
    end

    def call(*command)
      case command.first
      when "XREAD"
        after = command.last
        @reads << after
        newer = @entries.select { |id, _| C::Checkpoint.compare(id, after).positive? }
        newer.empty? ? nil : [["s", newer.map { |id, fields| [id, fields] }]]
      when "XINFO" then @info.to_a.flatten(1)
      end
    end
  end

  class FakeDeliverer
    attr_reader :delivered
    attr_accessor :failing

    def initialize
      @delivered = []
    end

    def deliver(events)
      raise Errno::ENOSPC, "spool" if failing
      @delivered.concat(events)
    end
  end

  def record(jid, kind = "enqueued")
    ["e", JSON.generate("k" => kind, "t" => 1_795_626_000.0, "job" => { "jid" => jid, "class" => "Job", "queue" => "default" })]
  end

  def setup
    @stream = FakeStream.new
    @deliverer = FakeDeliverer.new
    @checkpoint = C::Checkpoint.new(tmpdir, "s", logger)
    @reader = C::StreamReader.new(stream: "s", checkpoint: @checkpoint, deliverer: @deliverer, logger: logger, redis: ->(&block) { block.call(@stream) })
  end

  def test_entries_are_delivered_and_then_the_checkpoint_moves_past_them
    @stream.entries = [["1-0", record("a")], ["2-0", record("b", "started")]]
    assert_equal 2, @reader.step
    assert_equal %w[queued active], @deliverer.delivered.map { |event| event[:job][:state] }
    assert_equal "2-0", C::Checkpoint.new(tmpdir, "s", logger).id
    assert_equal 0, @reader.step
    assert_equal %w[0-0 2-0], @stream.reads
  end

  def test_when_delivery_fails_the_checkpoint_stays_and_the_entries_are_read_again
    @stream.entries = [["1-0", record("a")]]
    @deliverer.failing = true
    assert_raises(Errno::ENOSPC) { @reader.step }
    assert_equal "0-0", @checkpoint.id
    @deliverer.failing = false
    @reader.step
    assert_equal ["a"], @deliverer.delivered.map { |event| event[:job][:externalId] }
  end

  def test_an_entry_that_is_not_a_record_is_skipped_and_logged
    @stream.entries = [["1-0", ["e", "{not json"]], ["2-0", ["other", "x"]], ["3-0", record("c")]]
    @reader.step
    assert_equal ["c"], @deliverer.delivered.map { |event| event[:job][:externalId] }
    assert_equal "3-0", @checkpoint.id
    assert_equal 2, @reader.skipped_total
    assert_match(/skipped entry 1-0/, logged)
  end

  def test_a_scheduled_jobs_time_is_carried_onto_its_later_events
    scheduled = ["e", JSON.generate("k" => "scheduled", "t" => 1_795_626_000.0, "job" => { "jid" => "a", "class" => "Job", "at" => 1_795_626_060.0 })]
    @stream.entries = [["1-0", scheduled], ["2-0", record("a")]]
    @reader.step
    assert_equal ["2026-11-25T17:01:00.000Z"] * 2, @deliverer.delivered.map { |event| event[:job][:extensions]["eta"] }
  end

  def test_entries_trimmed_before_they_were_read_are_reported_at_start
    @checkpoint.save("5-0")
    @stream.info = { "length" => 10, "first-entry" => ["20-0", []], "max-deleted-entry-id" => "19-0", "entries-added" => 30 }
    @reader.check_for_trimmed_entries
    assert_match(/entries after the checkpoint 5-0 were trimmed/, logged)
  end

  def test_a_stream_read_to_its_end_is_not_reported_trimmed
    @checkpoint.save("25-0")
    @stream.info = { "length" => 10, "first-entry" => ["20-0", []], "max-deleted-entry-id" => "19-0", "entries-added" => 30 }
    @reader.check_for_trimmed_entries
    refute_match(/trimmed/, logged)
    assert_match(/resuming after 25-0/, logged)
  end
end
