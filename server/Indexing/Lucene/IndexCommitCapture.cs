namespace Jackdaw.Server.Indexing.Lucene;

/// <summary>
/// An index's last Lucene commit, held for a backup (<see cref="IndexFiles.CaptureCommit"/>): the
/// files it is made of stay on disk until this is disposed, and its positions say where the
/// index's work stood when it was made.
/// </summary>
public sealed class IndexCommitCapture : IDisposable
{
    private Action? _release;

    internal IndexCommitCapture(string folder, IReadOnlyList<string> files, IReadOnlyDictionary<string, CollectionPosition> positions, Action release)
    {
        Folder = folder;
        Files = files;
        Positions = positions;
        _release = release;
    }

    /// <summary>The index's folder.</summary>
    public string Folder { get; }

    /// <summary>The commit's file names, in the folder (segments_N among them).</summary>
    public IReadOnlyList<string> Files { get; }

    public IReadOnlyDictionary<string, CollectionPosition> Positions { get; }

    public void Dispose() => Interlocked.Exchange(ref _release, null)?.Invoke();
}
