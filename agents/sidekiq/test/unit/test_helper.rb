# Shared by the unit tests: load paths, a logger that keeps its lines, a temp directory.
require "minitest/autorun"
require "logger"
require "stringio"
require "tmpdir"
$LOAD_PATH.unshift(File.expand_path("../../lib", __dir__))

module UnitHelpers
  def log_io
    @log_io ||= StringIO.new
  end

  def logger
    @logger ||= Logger.new(log_io)
  end

  def logged
    log_io.string
  end

  def tmpdir
    @tmpdir ||= Dir.mktmpdir("jobwatch-sidekiq-unit-")
  end

  def after_teardown
    FileUtils.rm_rf(@tmpdir) if @tmpdir
    super
  end
end
