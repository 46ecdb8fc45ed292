require_relative "test_helper"
require "jobwatch/sidekiq/collector/checkpoint"

class CheckpointTest < Minitest::Test
  include UnitHelpers
  Checkpoint = Jobwatch::Sidekiq::Collector::Checkpoint

  def test_a_fresh_checkpoint_starts_at_the_beginning_of_the_stream
    assert_equal "0-0", Checkpoint.new(tmpdir, "s", logger).id
  end

  def test_a_saved_id_is_where_the_next_start_resumes
    Checkpoint.new(tmpdir, "s", logger).save("1700000000000-3")
    assert_equal "1700000000000-3", Checkpoint.new(tmpdir, "s", logger).id
    refute File.exist?(File.join(tmpdir, "stream-checkpoint.json.tmp"))
  end

  def test_a_checkpoint_of_another_stream_or_a_damaged_file_starts_over_and_says_so
    Checkpoint.new(tmpdir, "old-stream", logger).save("5-0")
    assert_equal "0-0", Checkpoint.new(tmpdir, "new-stream", logger).id
    assert_match(/saved for stream "old-stream"/, logged)
    File.write(File.join(tmpdir, "stream-checkpoint.json"), "{garbage")
    assert_equal "0-0", Checkpoint.new(tmpdir, "new-stream", logger).id
    assert_match(/unreadable/, logged)
  end

  def test_only_stream_ids_are_saved
    checkpoint = Checkpoint.new(tmpdir, "s", logger)
    assert_raises(ArgumentError) { checkpoint.save("$") }
    assert_equal "0-0", checkpoint.id
  end

  def test_ids_compare_by_number_not_text
    assert_equal 1, Checkpoint.compare("10-0", "9-0")
    assert_equal(-1, Checkpoint.compare("9-2", "9-10"))
    assert_equal 0, Checkpoint.compare("9-2", "9-2")
  end
end
