namespace Jackdaw.Client;

/// <summary>Whether an index keeps a field's value, so a projection can read it from the index.</summary>
public enum FieldStorage
{
    Yes,
    No,
}
