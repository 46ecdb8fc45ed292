require_relative "test_helper"
require "jobwatch/sidekiq/times"

class TimesTest < Minitest::Test
  Times = Jobwatch::Sidekiq::Times

  def test_sidekiq_6_and_7_float_seconds_and_sidekiq_8_milliseconds_are_the_same_instant
    assert_equal "2026-11-25T17:03:50.843Z", Times.iso_from_native(1_795_626_230.8427756)
    assert_equal "2026-11-25T17:03:50.843Z", Times.iso_from_native(1_795_626_230_843)
    assert_equal "2026-11-25T17:03:50.843Z", Times.iso_from_native("1795626230.8427756")
  end

  def test_what_is_not_a_time_is_absent
    [nil, "", "soon", 0, -5, Float::NAN, Float::INFINITY, [], {}].each { |value| assert_nil Times.iso_from_native(value), value.inspect }
  end

  def test_iso_keeps_milliseconds_and_the_z
    assert_equal "1970-01-01T00:00:01.500Z", Times.iso(1.5)
  end
end
