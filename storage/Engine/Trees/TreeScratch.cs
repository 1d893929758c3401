using Jackdaw.Storage.Engine.Paging;

namespace Jackdaw.Storage.Engine.Trees;

/// <summary>
/// Buffers for splits and relayouts, one set per environment: only the one write transaction
/// modifies trees, one call at a time, so a transaction (and a tree opened in it) allocates none.
/// </summary>
internal sealed class TreeScratch
{
    /// <summary>Most leaf entries a page can hold (empty keys and values).</summary>
    public const int MaxLeafEntries = Constants.UsablePageSpace / (TreePage.LeafEntryHeader + 2);

    /// <summary>Most pages a relayout reads: the leaf and its siblings up to <see cref="Tree.MaxReach"/> away on one side.</summary>
    public const int MaxRelayoutPages = Tree.MaxReach + 1;

    private byte[]? _splitPage;
    private byte[]? _relayoutPages;
    private int[]? _entrySizes;
    private byte[]? _separatorA;
    private byte[]? _separatorB;

    /// <summary>A copy of the page being split.</summary>
    public byte[] SplitPage => _splitPage ??= new byte[Constants.PageSize];

    /// <summary>Copies of the pages being laid out again.</summary>
    public byte[] RelayoutPages => _relayoutPages ??= new byte[MaxRelayoutPages * Constants.PageSize];

    /// <summary>Entry sizes across a relayout, the new entry included.</summary>
    public int[] EntrySizes => _entrySizes ??= new int[(MaxRelayoutPages * MaxLeafEntries) + 1];

    /// <summary>Two separator buffers: a branch split promotes a key while its parent still reads the incoming one.</summary>
    public byte[] SeparatorA => _separatorA ??= new byte[Constants.MaxKeySize];

    public byte[] SeparatorB => _separatorB ??= new byte[Constants.MaxKeySize];
}
