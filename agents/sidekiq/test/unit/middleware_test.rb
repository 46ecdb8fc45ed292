require_relative "test_helper"
require "minitest/mock"
require "sidekiq"
require "sidekiq/fetch"
require "jobwatch/sidekiq"
require "json"

class MiddlewareTest < Minitest::Test
  S = Jobwatch::Sidekiq

  class FakeRecorder
    attr_reader :records
    attr_accessor :failing

    def initialize
      @records = []
    end

    def record(record)
      raise IOError, "stream broken" if failing
      @records << record
      "1-#{@records.size}"
    end

    def kinds
      @records.map { |record| record["k"] }
    end
  end

  # Stands in for Sidekiq's Redis connection: the revoke flag and running mark in memory.
  class FakeRedis
    attr_reader :keys
    attr_accessor :broken

    def initialize
      @keys = {}
    end

    def call(*command)
      raise IOError, "Redis went away" if broken
      case command[0]
      when "SET"
        @keys[command[1]] = command[2]
        "OK"
      when "GET" then @keys[command[1]]
      when "DEL" then @keys.delete(command[1]) ? 1 : 0
      end
    end

    def multi
      queued = []
      collector = Object.new
      collector.define_singleton_method(:call) { |*command| queued << command }
      yield collector
      queued.map { |command| call(*command) }
    end
  end

  def setup
    @recorder = FakeRecorder.new
    @redis = FakeRedis.new
  end

  def with_redis(&block)
    Sidekiq.stub(:redis, ->(&inner) { inner.call(@redis) }, &block)
  end

  def job(extra = {})
    { "jid" => "j1", "class" => "Work", "queue" => "default", "retry" => 3, "created_at" => 1_795_626_000.0 }.merge(extra)
  end

  def run_server(job)
    with_redis { S::ServerMiddleware.new(@recorder).call(Object.new, job, "default") { yield } }
  end

  def test_a_job_that_succeeds_is_started_then_succeeded_and_its_running_mark_is_gone
    result = run_server(job) { :value }
    assert_equal :value, result
    assert_equal %w[started succeeded], @recorder.kinds
    assert_equal [1, 1], @recorder.records.map { |record| record["attempt"] }
    assert_equal 3, @recorder.records.first["max"]
    assert @recorder.records.last["started"], "the end carries the start"
    assert_empty @redis.keys, "the running mark is taken down"
  end

  def test_a_failure_with_retries_left_is_retrying_with_its_error_and_is_raised_on
    error = assert_raises(ArgumentError) { run_server(job("retry_count" => 1)) { raise ArgumentError, "bad input" } }
    assert_equal "bad input", error.message
    assert_equal %w[started retrying], @recorder.kinds
    assert_equal "ArgumentError: bad input", @recorder.records.last["error"]
    assert_match(/middleware_test\.rb/, @recorder.records.last["backtrace"])
    assert_equal 3, @recorder.records.last["attempt"]
  end

  def test_a_failure_with_no_retries_left_is_left_to_the_death_handler
    assert_raises(RuntimeError) { run_server(job("retry_count" => 2)) { raise "last try" } }
    assert_raises(RuntimeError) { run_server(job("retry" => false)) { raise "never retried" } }
    assert_raises(RuntimeError) { run_server(job("retry" => 0)) { raise "never retried" } }
    assert_equal %w[started started started], @recorder.kinds
  end

  def test_a_shutdown_puts_the_job_back_as_queued
    assert_raises(Sidekiq::Shutdown) { run_server(job) { raise Sidekiq::Shutdown } }
    assert_equal %w[started requeued], @recorder.kinds
  end

  def test_a_revoked_job_is_skipped_before_it_starts
    @redis.keys[S::RevokeFlags.flag_key("j1")] = "1"
    ran = false
    assert_nil run_server(job) { ran = true }
    refute ran
    assert_equal %w[cancelled], @recorder.kinds
    assert_empty @redis.keys, "the flag is taken down and no running mark is left"
  end

  def test_the_collector_sees_a_running_job_as_running
    runner = nil
    run_server(job) { runner = S::RevokeFlags.raise_flag(@redis, "j1") }
    assert_equal S::Compat.identity, runner
  end

  def test_a_broken_recorder_or_redis_never_fails_the_job
    @recorder.failing = true
    assert_equal :ok, run_server(job) { :ok }
    @redis.broken = true
    @recorder.failing = false
    assert_equal :ok, run_server(job) { :ok }
    assert_equal %w[started succeeded], @recorder.kinds
  end

  def test_the_death_handler_records_dead_with_the_attempt_that_ran
    assert_raises(RuntimeError) { run_server(job("retry_count" => 2)) { raise "last try" } }
    S::DeathHandler.new(@recorder).call(job("retry_count" => 3, "error_message" => "last try"), RuntimeError.new("last try"))
    dead = @recorder.records.last
    assert_equal ["dead", 4, "RuntimeError: last try"], [dead["k"], dead["attempt"], dead["error"]]
    S::DeathHandler.new(@recorder).call(job("jid" => "other", "retry_count" => 0), RuntimeError.new("x"))
    assert_equal 1, @recorder.records.last["attempt"], "without the middleware's note: retry_count + 1"
  end

  def test_the_client_middleware_records_enqueued_or_scheduled_and_passes_the_push_on
    middleware = S::ClientMiddleware.new(@recorder)
    assert_equal job, middleware.call("Work", job, "default", nil) { job }
    middleware.call("Work", job("at" => 1_795_626_060.0), "default", nil) { job("at" => 1_795_626_060.0) }
    assert_nil middleware.call("Work", job, "default", nil) { nil }
    assert_equal %w[enqueued scheduled], @recorder.kinds
    @recorder.failing = true
    assert_equal job, middleware.call("Work", job, "default", nil) { job }
  end

  def test_the_first_records_of_a_run_carry_its_arguments_masked_and_the_others_none
    args = [42, { "email" => "ada@example.com", "credentials" => [{ "password" => "hunter2" }] }]
    S::ClientMiddleware.new(@recorder).call("Work", job("args" => args), "default", nil) { job("args" => args) }
    run_server(job("args" => args)) { :done }
    assert_equal %w[enqueued started succeeded], @recorder.kinds
    masked = [42, { "email" => "ada@example.com", "credentials" => [{ "password" => "[redacted]" }] }]
    assert_equal [masked, masked, nil], @recorder.records.map { |record| record["args"] }
    refute_includes JSON.generate(@recorder.records), "hunter2"
  end

  def test_install_takes_the_key_patterns_and_the_jobs_whose_arguments_are_never_recorded
    saved = [S.recorder, S.arguments]
    S.install!(stream: "test-stream", max_length: 5000, redact_keys: %w[pin], omit_args: %w[Login*])
    S::ClientMiddleware.new(@recorder).call("LoginJob", job("class" => "LoginJob", "args" => ["ada", "hunter2"]), "default", nil) { job("class" => "LoginJob", "args" => ["ada", "hunter2"]) }
    S::ClientMiddleware.new(@recorder).call("Work", job("args" => [{ "pin" => 1, "password" => "kept" }]), "default", nil) { job("args" => [{ "pin" => 1, "password" => "kept" }]) }
    refute @recorder.records[0].key?("args")
    assert_equal [{ "pin" => "[redacted]", "password" => "kept" }], @recorder.records[1]["args"]
    with_env("JOBWATCH_OMIT_ARGS" => "A, B::*", "JOBWATCH_REDACT_KEYS" => "none") do
      S.install!(stream: "test-stream", max_length: 5000)
      assert_equal %w[A B::*], S.arguments.omitted.names
      assert_equal [], S.arguments.redactor.patterns
    end
    with_env("JOBWATCH_REDACT_KEYS" => "pass word") { assert_raises(ArgumentError) { S.install!(stream: "test-stream", max_length: 5000) } }
  ensure
    S.recorder, S.arguments = saved
  end

  def with_env(values)
    before = values.to_h { |name, _| [name, ENV[name]] }
    values.each { |name, value| ENV[name] = value }
    yield
  ensure
    before.each { |name, value| ENV[name] = value }
  end

  def test_install_adds_each_piece_once_and_a_second_call_changes_the_stream
    saved = S.recorder
    2.times { S.install!(stream: "test-stream", max_length: 5000) }
    assert_equal 1, Sidekiq.client_middleware.entries.count { |entry| entry.klass == S::ClientMiddleware }
    assert_equal 1, Sidekiq.death_handlers.count { |handler| handler.is_a?(S::DeathHandler) } if Sidekiq.server?
    assert_equal "test-stream", S.recorder.stream
    assert_raises(ArgumentError) { S.install!(max_length: 10) }
  ensure
    S.recorder = saved
  end
end
