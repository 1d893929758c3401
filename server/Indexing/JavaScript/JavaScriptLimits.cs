namespace Jackdaw.Server.Indexing.JavaScript;

/// <summary>
/// The sandbox of a JavaScript index: what one map function may spend on one document before the
/// document fails with an <see cref="IndexMapException"/> (an index error for that document; the next
/// document maps normally). The defaults are sized for real documents, not for the smallest number
/// that still passes a test: a 1,000-line order mapped with a fan-out and a <c>reduce</c> stays far
/// below each of them.
/// </summary>
public sealed record JavaScriptLimits
{
    /// <summary>The limits an index gets when its definition names none.</summary>
    public static JavaScriptLimits Default { get; } = new();

    /// <summary>
    /// Statements one map function may execute for one document. 100,000 rather than RavenDB's
    /// 10,000: a <c>reduce</c> or a fan-out spends one or two statements per array item, so 10,000
    /// left a 1,000-line order only a handful of statements per line for helper functions. An
    /// infinite loop still stops within a few milliseconds; <see cref="Timeout"/> bounds the time.
    /// </summary>
    public int MaxStatements { get; init; } = 100_000;

    /// <summary>Wall-clock time one map function may run for one document.</summary>
    public TimeSpan Timeout { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>Depth of nested JavaScript calls (a map's own recursion and its helper functions).</summary>
    public int MaxRecursionDepth { get; init; } = 64;

    /// <summary>
    /// Bytes the indexing thread may allocate while one map function runs for one document. Jint
    /// counts the thread's allocations since the document started, garbage included, not live memory:
    /// reading a whole document allocates a few times its size, so 64 MB leaves room for multi-megabyte
    /// documents while still stopping a runaway loop long before it threatens the process.
    /// </summary>
    public long MaxAllocatedBytes { get; init; } = 64L * 1024 * 1024;

    /// <summary>
    /// Largest array a map may create. Jint checks it before allocating, which catches
    /// <c>new Array(1e9).fill(0)</c>: one native call the statement and memory checks would only see
    /// after it had allocated.
    /// </summary>
    public int MaxArrayLength { get; init; } = 1_000_000;

    /// <summary>
    /// Largest attachment a map may read as text (<c>loadAttachment(doc, name).getContentAsString()</c>);
    /// a larger one fails the document with an index error naming both sizes. A quarter of
    /// <see cref="MaxAllocatedBytes"/>: the bytes read and the string made of them (two bytes a
    /// character) are both charged to the map's allocations, so a text near this size still leaves
    /// the map room to work with it. Attachment details (<c>attachmentsFor</c>) have no limit.
    /// </summary>
    public long MaxAttachmentBytes { get; init; } = 16L * 1024 * 1024;
}
