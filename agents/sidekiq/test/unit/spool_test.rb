require_relative "test_helper"
require "jobwatch/sidekiq/collector/spool"

class SpoolTest < Minitest::Test
  include UnitHelpers
  Spool = Jobwatch::Sidekiq::Collector::Spool

  def test_batches_come_back_oldest_first_and_survive_a_restart
    spool = Spool.new(tmpdir, 1 << 20, logger)
    spool.append(['{"n":1}', '{"n":2}'])
    spool.append(['{"n":3}'])
    assert_equal 3, spool.events
    again = Spool.new(tmpdir, 1 << 20, logger)
    assert_equal 3, again.events
    sequence, batch = again.oldest
    assert_equal ['{"n":1}', '{"n":2}'], batch
    again.remove(sequence)
    assert_equal [['{"n":3}'], 1], [again.oldest[1], again.events]
    assert_match(/3 events in 2 batches kept from a previous run/, logged)
  end

  def test_past_its_bound_the_oldest_batches_are_dropped_and_counted
    spool = Spool.new(tmpdir, 40, logger)
    spool.append(['{"n":"first-batch-x"}'])
    spool.append(['{"n":"second-batch"}'])
    spool.append(['{"n":"third-batch-"}'])
    assert_equal 1, spool.events
    assert_equal 2, spool.dropped_events
    assert_equal ['{"n":"third-batch-"}'], spool.oldest[1]
    assert_match(/spool full .* dropped the 1 oldest events/, logged)
  end

  def test_a_half_written_file_is_removed_and_an_unreadable_batch_dropped_with_a_log_line
    File.write(File.join(tmpdir, "000000000001-2.json.tmp"), "[{")
    File.write(File.join(tmpdir, "000000000002-2.json"), "[{not json")
    File.write(File.join(tmpdir, "000000000003-1.json"), '[{"n":3}]')
    spool = Spool.new(tmpdir, 1 << 20, logger)
    refute File.exist?(File.join(tmpdir, "000000000001-2.json.tmp"))
    assert_equal ['{"n":3}'], spool.oldest[1]
    assert_equal 2, spool.dropped_events
    assert_match(/dropped 2 events: batch file 2 unreadable/, logged)
  end

  def test_new_batches_are_numbered_after_the_kept_ones
    File.write(File.join(tmpdir, "000000000007-1.json"), '[{"n":7}]')
    spool = Spool.new(tmpdir, 1 << 20, logger)
    spool.append(['{"n":8}'])
    assert File.exist?(File.join(tmpdir, "000000000008-1.json"))
  end
end
