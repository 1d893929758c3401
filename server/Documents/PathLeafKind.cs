namespace Jackdaw.Server.Documents;

/// <summary>What a <see cref="DocumentPath"/> found at its end (see the leaf rules there).</summary>
public enum PathLeafKind : byte
{
    /// <summary>An explicit JSON <c>null</c>: present, equal to <c>null</c> only.</summary>
    Null,

    True,

    False,

    /// <summary>A number that reads as a double (<see cref="PathLeaf.Number"/>): an integer, or a number text that parses.</summary>
    Number,

    /// <summary>A number that does not read as a double (its text does not parse, or is NaN): present, equal to nothing.</summary>
    BadNumber,

    String,

    /// <summary>An object where the path ends: present, equal to nothing (a projection writes it whole).</summary>
    Object,
}
