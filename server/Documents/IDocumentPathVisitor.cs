namespace Jackdaw.Server.Documents;

/// <summary>
/// What a <see cref="DocumentPath"/> walk calls, in document order: <see cref="Leaf"/> for each value
/// the path reaches, and <see cref="EnterArray"/>/<see cref="LeaveArray"/> around the elements of each
/// array it meets (nested arrays nest the calls), so a projection can rebuild the arrays' shape and
/// everything else can ignore them. Implement it with a struct: the walk is generic over it, and the
/// JIT then calls it without an interface dispatch.
/// </summary>
public interface IDocumentPathVisitor
{
    /// <summary>A value the path reached. Return false to stop the walk (no more calls follow).</summary>
    bool Leaf(PathLeaf leaf);

    /// <summary>An array begins; its elements follow (each walked on by the rest of the path).</summary>
    void EnterArray();

    /// <summary>The array last entered ends.</summary>
    void LeaveArray();
}
