# The spool directory holds the app's job names, errors and backtraces: the collector's
# alone. Directories are created 0700 and files 0600 whatever the umask, and at start the
# tree is tightened, so a spool written by an older version (0755, 0644) is fixed, as
# jobwatch does with its data directory.
require "fileutils"

module Jobwatch
  module Sidekiq
    module Collector
      module PrivateFiles
        DIR_MODE = 0o700
        FILE_MODE = 0o600
        SHARED_BITS = 0o077

        module_function

        # `mkdir -p` whose new directories are 0700 (a umask only takes bits away).
        def mkdir_p(directory)
          FileUtils.mkdir_p(directory, mode: DIR_MODE)
        end

        # Opens a file for binary writing that is 0600 afterwards, also when it existed with another mode.
        def open_write(path, &block)
          File.open(path, File::WRONLY | File::CREAT | File::TRUNC | File::BINARY, FILE_MODE) do |file|
            file.chmod(FILE_MODE)
            block.call(file)
          end
        end

        # Removes group and other access from `root` and everything under it; lines for the log.
        # Symbolic links are neither followed nor changed; a shared directory (sticky, such as
        # /tmp) is left as it is: it is not the collector's to close.
        def tighten(root)
          changed = []
          problems = []
          walk = lambda do |path|
            stat = File.lstat(path)
            return if stat.symlink?
            mode = stat.mode & 0o7777
            if path == root && stat.directory? && stat.sticky?
              problems << "#{root} is a shared directory (mode 0#{mode.to_s(8)}): its own mode is left as it is; give the collector a directory of its own"
            elsif (mode & SHARED_BITS).positive?
              File.chmod(mode & ~SHARED_BITS, path)
              changed << "#{path == root ? "." : path.delete_prefix("#{root}/")} 0#{mode.to_s(8)} -> 0#{(mode & ~SHARED_BITS).to_s(8)}"
            end
            Dir.children(path).sort.each { |name| walk.call(File.join(path, name)) } if stat.directory?
          rescue Errno::ENOENT
            nil
          rescue SystemCallError => e
            problems << "could not tighten #{path} (#{e.message})"
          end
          walk.call(root)
          lines = []
          unless changed.empty?
            more = changed.size > 10 ? ", and #{changed.size - 10} more" : ""
            lines << "removed group/other access from #{changed.size} path(s) under #{root} (job names, errors and backtraces are kept there): " \
                     "#{changed.first(10).join(", ")}#{more}"
          end
          lines + problems.first(10)
        end
      end
    end
  end
end
