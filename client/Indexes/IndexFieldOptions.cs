namespace Jackdaw.Client;

/// <summary>Options of one field of an index; an option left null is the server's default (<see cref="FieldIndexing.Default"/>, not stored).</summary>
public sealed class IndexFieldOptions
{
    public FieldIndexing? Indexing { get; set; }

    public FieldStorage? Storage { get; set; }
}
