# What the collector leaves on disk and in its log: the spool holds the app's job names, errors
# and backtraces, so it is the collector's alone (0700, 0600, an older spool tightened at start);
# log lines carry names from Sidekiq and jobwatch, so their control characters are escaped.
require_relative "test_helper"
require "jobwatch/sidekiq/collector/spool"
require "jobwatch/sidekiq/collector/checkpoint"
require "jobwatch/sidekiq/collector/private_files"
require "jobwatch/sidekiq/collector/runner"

class SpoolModesAndLogTest < Minitest::Test
  include UnitHelpers
  C = Jobwatch::Sidekiq::Collector

  def mode_of(path)
    File.stat(path).mode & 0o7777
  end

  def under_open_umask
    before = File.umask(0)
    yield
  ensure
    File.umask(before)
  end

  def test_the_spool_directory_is_0700_and_its_files_0600_whatever_the_umask
    directory = File.join(tmpdir, "spool", "events")
    under_open_umask do
      C::Spool.new(directory, 1 << 20, logger).append(['{"job":{"name":"InvoiceJob","error":"card declined"}}'])
      C::Checkpoint.new(File.join(tmpdir, "spool"), "stream", logger).save("1-0")
    end
    batch = Dir.children(directory).first
    assert_equal [0o700, 0o700, 0o600], [mode_of(directory), mode_of(File.dirname(directory)), mode_of(File.join(directory, batch))]
    assert_equal 0o600, mode_of(File.join(tmpdir, "spool", "stream-checkpoint.json"))
  end

  def test_a_spool_an_older_version_wrote_is_tightened_and_the_log_says_what_changed
    root = File.join(tmpdir, "spool")
    FileUtils.mkdir_p(File.join(root, "events"))
    batch = File.join(root, "events", "000000000001-1.json")
    File.write(batch, "[]")
    File.chmod(0o755, root)
    File.chmod(0o755, File.join(root, "events"))
    File.chmod(0o644, batch)
    lines = C::PrivateFiles.tighten(root)
    assert_equal [0o700, 0o700, 0o600], [mode_of(root), mode_of(File.join(root, "events")), mode_of(batch)]
    assert_equal 1, lines.size
    assert_includes lines.first, "removed group/other access from 3 path(s) under #{root}"
    assert_includes lines.first, "events/000000000001-1.json 0644 -> 0600"
    assert_empty C::PrivateFiles.tighten(root)
  end

  def test_a_shared_sticky_directory_is_left_open_and_the_log_says_so
    File.chmod(0o1777, tmpdir)
    lines = C::PrivateFiles.tighten(tmpdir)
    assert_equal 0o1777, mode_of(tmpdir)
    assert_includes lines.join("\n"), "is a shared directory (mode 01777): its own mode is left as it is"
  end

  def test_control_characters_in_a_log_line_are_escaped_so_no_name_forges_a_line
    io = StringIO.new
    log = C::Runner.logger_for("info", io)
    log.info("queue default\n2026-11-20T10:00:00.000Z ERROR jobwatch-sidekiq: dropped 1000 events\r\u0000\e[31m\u2028 emptied")
    assert_equal 1, io.string.lines.size
    assert_match(/jobwatch-sidekiq: queue default\\n2026-11-20T10:00:00.000Z ERROR jobwatch-sidekiq: dropped 1000 events\\r\\x00\\x1b\[31m\\u2028 emptied\n\z/, io.string)
  end
end
