using System.Runtime.CompilerServices;
using System.Text;
using Jackdaw.Storage.Engine.Paging;
using Jackdaw.Storage.Engine.Trees;

namespace Jackdaw.Storage.Engine;

/// <summary>
/// A consistent snapshot: everything committed and durable when it began, nothing after.
/// Dispose it promptly: the flusher cannot write pages newer than the oldest open snapshot.
/// </summary>
public class ReadTransaction : IDisposable
{
    internal const string RootTreeName = "$root";

    // The first tree opened is kept in a field and the table is created for a second one only:
    // a point read opens one tree and should allocate little.
    private string? _firstName;
    private Tree? _firstTree;
    private Dictionary<string, Tree?>? _trees;
    private Tree? _rootTree;

    internal ReadTransaction(StorageEnvironment environment, long snapshot, long epoch)
    {
        Environment = environment;
        Snapshot = snapshot;
        Epoch = epoch;
    }

    /// <summary>Page-array epoch at the start (see <see cref="PagePool"/>).</summary>
    internal long Epoch { get; }

    internal StorageEnvironment Environment { get; }

    /// <summary>Page versions with an id at or below this are visible.</summary>
    internal long Snapshot { get; }

    internal bool IsDisposed { get; private set; }

    /// <summary>For a read transaction the id of the commit it sees; for a write transaction its own id.</summary>
    public virtual long Id => Snapshot;

    internal virtual bool IsWrite => false;

    internal Tree RootTree => _rootTree ??= new Tree(this, RootTreeName, ReadState().RootTree, isRoot: true);

    internal StateHeader ReadState() => StateHeader.Of(GetPage(Constants.StatePage).Span);

    /// <summary>The tree, or null when no tree of that name exists.</summary>
    public Tree? OpenTree(string name)
    {
        ThrowIfDisposed();
        if (_trees is null && ReferenceEquals(_firstName, name))
        {
            return _firstTree;
        }

        if (_trees is not null && _trees.TryGetValue(name, out var tree))
        {
            return tree;
        }

        tree = null;
        var maxBytes = Encoding.UTF8.GetMaxByteCount(name.Length);
        var key = maxBytes <= 256 ? stackalloc byte[256] : new byte[maxBytes];
        key = key[..Encoding.UTF8.GetBytes(name, key)];
        // A read transaction's root tree is the one in the state page: read it without making its
        // tree object (a point read opens one tree, and would otherwise pay for two). A write
        // transaction's may have changed since it began, in its own object.
        var found = _rootTree is null && !IsWrite
            ? Tree.TryGet(this, ReadState().RootTree.RootPage, key, out var value)
            : RootTree.TryGet(key, out value);
        if (found)
        {
            tree = new Tree(this, name, System.Runtime.InteropServices.MemoryMarshal.Read<TreeHeader>(value), isRoot: false);
        }

        if (_trees is null && _firstName is null && !IsWrite)
        {
            _firstName = name;
            _firstTree = tree;
        }
        else
        {
            OpenedTrees[name] = tree;
        }
        return tree;
    }

    internal Dictionary<string, Tree?> OpenedTrees
    {
        get
        {
            if (_trees is null)
            {
                _trees = new(StringComparer.Ordinal);
                if (_firstName is not null)
                {
                    _trees[_firstName] = _firstTree;
                }
            }

            return _trees;
        }
    }

    /// <summary>The page as this transaction sees it. Tree pages are 8 KiB; an overflow run is its full length.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal virtual PageHandle GetPage(long pageNumber)
    {
        var scratch = Environment.PageTable.TryGet(pageNumber, Snapshot);
        return scratch is not null ? new PageHandle(scratch) : GetFromDataFile(pageNumber);
    }

    internal unsafe PageHandle GetFromDataFile(long pageNumber)
    {
        var p = Environment.DataFile.PagePointer(pageNumber, out var available);
        var header = (PageHeader*)p;
        var length = (header->Flags & PageFlags.Overflow) != 0 ? (long)header->OverflowPages * Constants.PageSize : Constants.PageSize;
        if (length > available || length <= 0)
        {
            Environment.DataFile.ThrowCorruptPage(pageNumber, $"an overflow run of {header->OverflowPages} pages runs past the end of the file");
        }

        return new PageHandle(p, (int)length);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void ThrowIfDisposed()
    {
        if (IsDisposed)
        {
            ThrowDisposed();
        }
    }

    private static void ThrowDisposed() => throw new ObjectDisposedException(nameof(ReadTransaction), "The transaction has ended; trees, iterators and values from it are no longer valid.");

    /// <summary>Ends the transaction without <see cref="OnDispose"/> (a commit released its resources itself).</summary>
    internal void MarkDisposed() => IsDisposed = true;

    protected virtual void OnDispose() => Environment.EndRead(Snapshot, Epoch);

    public void Dispose()
    {
        if (IsDisposed)
        {
            return;
        }

        IsDisposed = true;
        OnDispose();
        GC.SuppressFinalize(this);
    }
}
