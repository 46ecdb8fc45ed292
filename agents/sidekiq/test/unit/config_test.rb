require_relative "test_helper"
require "jobwatch/sidekiq/collector/config"

class ConfigTest < Minitest::Test
  C = Jobwatch::Sidekiq::Collector
  REQUIRED = { "JOBWATCH_URL" => "http://jobwatch:3000/", "JOBWATCH_API_KEY" => "sk_abc" }.freeze

  def test_defaults_apply_when_only_the_required_settings_are_given
    config = C.load([], REQUIRED)
    assert_equal "redis://localhost:6379/0", config.redis_url
    assert_equal "http://jobwatch:3000", config.url
    assert_equal "./jobwatch-spool", config.spool_dir
    assert_equal 256 * 1024 * 1024, config.spool_max_bytes
    assert_equal "jobwatch:sidekiq:events", config.stream
    assert_equal 2.0, config.poll_interval_s
    assert_equal 20.0, config.process_stale_s
    assert_nil config.connection_id
    assert_equal %w[password passwd secret token api_key apikey authorization cookie credit_card card_number ssn], config.redact_keys
    assert_equal [], config.omit_args
  end

  def test_redact_keys_replace_the_default_patterns_and_omit_args_add_up_however_given
    assert_equal %w[pin iban], C.load(["--redact-keys", "pin, iban"], REQUIRED).redact_keys
    assert_equal [], C.load([], REQUIRED.merge("JOBWATCH_REDACT_KEYS" => "none")).redact_keys
    config = C.load(["--omit-args", "LoginJob", "ResetJob", "--omit-args", "Billing::*,Refunds::*", "--poll-interval", "1"], REQUIRED)
    assert_equal %w[LoginJob ResetJob Billing::* Refunds::*], config.omit_args
    assert_equal 1.0, config.poll_interval_s
    assert_equal %w[A B], C.load([], REQUIRED.merge("JOBWATCH_OMIT_ARGS" => "A,B")).omit_args
  end

  def test_flags_win_over_the_environment
    env = REQUIRED.merge("REDIS_URL" => "redis://env:1/0", "JOBWATCH_SPOOL_DIR" => "/env-spool")
    config = C.load(["--redis", "redis://flag:2/1", "--spool-dir", "flag-spool", "--poll-interval", "1.5"], env)
    assert_equal ["redis://flag:2/1", "flag-spool", 1.5], [config.redis_url, config.spool_dir, config.poll_interval_s]
    assert_equal "redis://env:1/0", C.load([], env).redis_url
    assert_equal "/env-spool", C.load([], env).spool_dir
  end

  def test_a_bad_setting_is_named_in_the_error
    {
      [[], {}] => "--url (or JOBWATCH_URL) is required",
      [[], { "JOBWATCH_URL" => "http://x" }] => "--api-key (or JOBWATCH_API_KEY) is required",
      [[], REQUIRED.merge("JOBWATCH_API_KEY" => "abc")] => "--api-key: a jobwatch API key starts with sk_",
      [["--url", "ftp://x"], REQUIRED] => "--url: \"ftp://x\" is not an http(s) URL",
      [["--redis", "localhost:6379"], REQUIRED] => "--redis: \"localhost:6379\" is not a URL",
      [["--poll-interval", "10"], REQUIRED] => "--poll-interval: 10 is outside 0.5..5",
      [["--process-stale", "3"], REQUIRED] => "--process-stale: 3 is outside 6..300",
      [["--spool-max-mb", "1.5"], REQUIRED] => "--spool-max-mb: \"1.5\" is not a whole number",
      [["--log-level", "loud"], REQUIRED] => "--log-level: \"loud\" is not one of",
      [["--nonsense"], REQUIRED] => "invalid option: --nonsense",
      [["--redact-keys", "pass word"], REQUIRED] => "--redact-keys: \"pass word\" is not a key pattern",
      [["--redact-keys", ","], REQUIRED] => "--redact-keys: name 1 to 100 key patterns",
      [["--omit-args", "J" * 1025], REQUIRED] => "--omit-args: \"JJJJ",
    }.each do |(argv, env), message|
      error = assert_raises(C::ConfigError, argv.inspect) { C.load(argv, env) }
      assert_includes error.message, message
    end
  end

  def test_an_empty_environment_variable_counts_as_unset
    assert_equal "redis://localhost:6379/0", C.load([], REQUIRED.merge("REDIS_URL" => "")).redis_url
  end
end
