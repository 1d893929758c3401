namespace Jackdaw.Client;

/// <summary>An amount of data as the server reports it (<c>{"SizeInBytes":n}</c>).</summary>
public sealed class DataSize
{
    public long SizeInBytes { get; set; }
}
