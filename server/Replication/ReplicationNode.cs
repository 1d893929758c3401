namespace Jackdaw.Server.Replication;

/// <summary>Another node holding a database: its tag and the URL its HTTP port is reached at (<c>http://10.0.0.2:8080</c>).</summary>
public sealed record ReplicationNode(string Tag, string Url);
