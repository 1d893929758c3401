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
public sealed class StorageCorruptedException : StorageException
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
