require_relative "test_helper"
require "jobwatch/sidekiq/collector/process_tracker"

class ProcessTrackerTest < Minitest::Test
  include UnitHelpers
  C = Jobwatch::Sidekiq::Collector
  NOW = 1_795_626_000.0

  def setup
    @mono = 0.0
    @tracker = C::ProcessTracker.new(stale_s: 8, logger: logger, clock: -> { @mono })
  end

  def process(beat, busy: 0)
    { "identity" => "host:1:abc", "hostname" => "host", "pid" => 1, "concurrency" => 5, "busy" => busy, "queues" => ["default"], "beat" => beat }
  end

  def states(events)
    events.map { |event| event[:worker] ? event[:worker][:state] : event[:job][:state] }
  end

  def test_a_beating_process_is_online_once_then_busy_or_idle_every_poll
    assert_equal %w[online idle], states(@tracker.observe([process(NOW)], [], now_s: NOW))
    @mono += 2
    assert_equal %w[busy], states(@tracker.observe([process(NOW, busy: 2)], [], now_s: NOW + 2))
  end

  def test_a_process_whose_beat_stops_moving_goes_offline_once_and_its_running_jobs_are_lost
    running = [["host:1:abc", { "jid" => "j1", "class" => "Slow", "queue" => "default" }]]
    @tracker.observe([process(NOW, busy: 1)], running, now_s: NOW)
    @mono += 7
    assert_equal %w[busy], states(@tracker.observe([process(NOW, busy: 1)], running, now_s: NOW + 7)), "7 s without a new beat is not yet stale"
    @mono += 2
    events = @tracker.observe([process(NOW, busy: 1)], running, now_s: NOW + 9)
    assert_equal %w[offline failed], states(events)
    lost = events.last
    assert_equal "j1", lost[:job][:externalId]
    assert_equal "host:1:abc", lost[:job][:workerId]
    assert_equal Jobwatch::Sidekiq::Times.iso(NOW), lost[:timestamp], "timed at the last beat, so a later completion wins"
    @mono += 2
    assert_empty @tracker.observe([process(NOW, busy: 1)], running, now_s: NOW + 11), "offline is reported once"
    @mono += 1
    assert_equal %w[online idle], states(@tracker.observe([process(NOW + 12)], [], now_s: NOW + 12)), "a beat again brings it back"
  end

  def test_a_process_seen_beating_every_5s_is_offline_after_10s_without_a_beat
    tracker = C::ProcessTracker.new(stale_s: 20, logger: logger, clock: -> { @mono })
    tracker.observe([process(NOW)], [], now_s: NOW)
    [5, 10, 15].each do |beat|
      @mono = beat
      tracker.observe([process(NOW + beat)], [], now_s: NOW + beat)
    end
    @mono = 25
    assert_equal %w[idle], states(tracker.observe([process(NOW + 15)], [], now_s: NOW + 25)), "10 s without a beat: not yet"
    @mono = 25.5
    assert_equal %w[offline], states(tracker.observe([process(NOW + 15)], [], now_s: NOW + 25.5))
    assert_match(/no heartbeat for 10\.5s/, logged)
  end

  def test_a_slow_beater_is_judged_by_the_bound_alone
    tracker = C::ProcessTracker.new(stale_s: 20, logger: logger, clock: -> { @mono })
    tracker.observe([process(NOW)], [], now_s: NOW)
    [12, 24].each do |beat|
      @mono = beat
      tracker.observe([process(NOW + beat)], [], now_s: NOW + beat)
    end
    @mono = 44
    assert_equal %w[idle], states(tracker.observe([process(NOW + 24)], [], now_s: NOW + 44)), "twice 12 s is past the 20 s bound: 20 s it is"
    @mono = 44.5
    assert_equal %w[offline], states(tracker.observe([process(NOW + 24)], [], now_s: NOW + 44.5))
  end

  def test_a_process_first_seen_with_an_old_beat_is_offline_at_once
    assert_equal %w[offline], states(@tracker.observe([process(NOW - 30)], [], now_s: NOW))
  end

  def test_a_process_that_left_the_set_stopped_and_is_offline
    @tracker.observe([process(NOW)], [], now_s: NOW)
    @mono += 2
    assert_equal %w[offline], states(@tracker.observe([], [], now_s: NOW + 2))
    assert_empty @tracker.live_processes
  end
end
