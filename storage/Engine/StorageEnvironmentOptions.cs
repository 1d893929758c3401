namespace Jackdaw.Storage.Engine;

/// <summary>Where and how a <see cref="StorageEnvironment"/> keeps its files.</summary>
public sealed class StorageEnvironmentOptions
{
    /// <summary>The environment's folder (data file, journals, lock file). Created if missing.</summary>
    public required string Path { get; init; }

    /// <summary>Size of a new data file. The file then grows by a quarter of its size per step, at least this much and at most 64 MiB.</summary>
    public long InitialDataFileSize { get; init; } = 2 * 1024 * 1024;

    /// <summary>A journal file is preallocated to this size; a commit that does not fit starts the next file.</summary>
    public long MaxJournalFileSize { get; init; } = 64 * 1024 * 1024;

    /// <summary>Period of the background flusher that copies committed pages to the data file.</summary>
    public TimeSpan FlushInterval { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>
    /// The flusher also runs early once this many committed pages wait in scratch memory,
    /// which bounds memory under a heavy write load.
    /// </summary>
    public int FlushThresholdPages { get; init; } = 16 * 1024;

    /// <summary>Where the engine's file writes and syncs go: the real files, or a test's fault injector.</summary>
    public StorageIo Io { get; init; } = StorageIo.Default;
}
