require_relative "test_helper"
require "jobwatch/sidekiq/collector/set_scanner"

class SetScannerTest < Minitest::Test
  C = Jobwatch::Sidekiq::Collector
  Entry = Struct.new(:item, :score)

  def entry(jid, score)
    Entry.new({ "jid" => jid, "class" => "Job", "queue" => "default", "created_at" => 1_795_626_000.0, "retry_count" => 0,
                "error_class" => "IOError", "error_message" => "disk" }, score)
  end

  def test_each_entry_is_reported_once_and_only_up_to_the_bound_per_poll
    retry_set = [entry("a", 1_795_626_100.0), entry("b", 1_795_626_101.0), entry("c", 1_795_626_102.0)]
    scanner = C::SetScanner.new(scan_max: 2, sets: { "retry" => -> { retry_set } })
    first = scanner.events
    assert_equal %w[a b], first.map { |event| event[:job][:externalId] }
    assert_equal %w[retrying retrying], first.map { |event| event[:job][:state] }
    assert_empty scanner.events, "what was reported is not reported again"
    retry_set.unshift(entry("d", 1_795_626_103.0))
    assert_equal %w[d], scanner.events.map { |event| event[:job][:externalId] }
  end

  def test_a_job_back_in_a_set_with_a_new_score_is_reported_again
    retry_set = [entry("a", 1_795_626_100.0)]
    scanner = C::SetScanner.new(scan_max: 10, sets: { "retry" => -> { retry_set } })
    scanner.events
    retry_set.replace([entry("a", 1_795_626_200.0)])
    assert_equal 1, scanner.events.size
  end
end
