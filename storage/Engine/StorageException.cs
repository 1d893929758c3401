namespace Jackdaw.Storage.Engine;

/// <summary>Base of every error the storage engine reports.</summary>
public class StorageException : Exception
{
    public StorageException()
    {
    }

    public StorageException(string message) : base(message)
    {
    }

    public StorageException(string message, Exception innerException) : base(message, innerException)
    {
    }
}

/// <summary>The environment's folder is already opened by another process (or another environment in this one).</summary>
public sealed class EnvironmentLockedException : StorageException
{
    public EnvironmentLockedException(string path, Exception innerException)
        : base($"The storage environment at '{path}' is in use by another process (its lock file is held). Close the other process or use another folder.", innerException)
    {
        Path = path;
    }

    public string Path { get; }
}

/// <summary>A file of the environment is damaged beyond what recovery repairs. <see cref="FileName"/> names it.</summary>
public class StorageCorruptedException : StorageException
{
    public StorageCorruptedException(string fileName, string message)
        : base($"{message} (file: '{fileName}')")
    {
        FileName = fileName;
    }

    public string FileName { get; }
}

/// <summary>A key or value does not respect a documented limit.</summary>
public sealed class StorageLimitException : StorageException
{
    public StorageLimitException(string message) : base(message)
    {
    }
}

/// <summary>
/// The file system holding the environment has no space left (ENOSPC). Nothing that was
/// acknowledged is lost: the journal keeps every durable transaction. Free space and reopen the
/// environment (the server does this by itself, with back-off).
/// </summary>
public sealed class DiskFullException : StorageException
{
    public DiskFullException(string path, Exception? innerException = null)
        : this(path, null, innerException)
    {
    }

    /// <param name="path">The file or folder that could not be written.</param>
    /// <param name="message">A message of its own; null for the standard one.</param>
    /// <param name="innerException">The operating system's error.</param>
    public DiskFullException(string path, string? message, Exception? innerException)
        : base(message ?? $"The disk holding '{path}' is full: no space left to write. Free space on that file system; writes resume once the database is reopened.", innerException!)
    {
        Path = path;
    }

    /// <summary>The file or folder that could not be written.</summary>
    public string Path { get; }
}

/// <summary>
/// The journal records an incremental backup (or journal retention) needs were not kept: the journal
/// files after <see cref="AfterTransactionId"/> were deleted once flushed. Take a full backup.
/// </summary>
public sealed class JournalsUnavailableException : StorageException
{
    public JournalsUnavailableException(long afterTransactionId, string message) : base(message)
    {
        AfterTransactionId = afterTransactionId;
    }

    /// <summary>The transaction after which records were asked for.</summary>
    public long AfterTransactionId { get; }
}

/// <summary>
/// A backup stream that fails its checks (a checksum, a header, a chunk out of place, a newer format)
/// or does not continue the chain being restored. The message says what failed and where;
/// <see cref="StorageCorruptedException.FileName"/> names the stream (its file name when it is a file).
/// </summary>
public sealed class BackupStreamException : StorageCorruptedException
{
    public BackupStreamException(string stream, string message) : base(stream, message)
    {
    }
}
