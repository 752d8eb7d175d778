package org.archive.crawler.datamodel;

import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.Serializable;

/**
 * Test-only stand-in for Heritrix 1.14's {@code org.archive.crawler.datamodel.CandidateURI}:
 * the same name, serialVersionUID, serializable fields and {@code writeObject} data (the URI
 * with {@code writeUTF}, then the via URI and the attribute list as objects), so that values
 * written through it are byte-for-byte what Heritrix 1.14 stores. No Heritrix code is here:
 * only the serialized shape, which is what a reader of a Heritrix store depends on.
 */
public class CandidateURI implements Serializable {
    private static final long serialVersionUID = -7152937921526560388L;

    private int schedulingDirective = 3;
    private transient String uuri;
    private boolean isSeed = false;
    private boolean forceRevisit = false;
    private String pathFromSeed;
    private transient String via;
    private CharSequence viaContext;
    private transient Object alist;
    private String cachedCandidateURIString = null;
    private String classKey;

    public CandidateURI(String uri, String via, String pathFromSeed, String classKey,
                        int schedulingDirective, boolean isSeed, CharSequence viaContext) {
        this.uuri = uri;
        this.via = via;
        this.pathFromSeed = pathFromSeed;
        this.classKey = classKey;
        this.schedulingDirective = schedulingDirective;
        this.isSeed = isSeed;
        this.viaContext = viaContext;
    }

    public String getClassKey() {
        return classKey;
    }

    public int getSchedulingDirective() {
        return schedulingDirective;
    }

    public String toString() {
        return uuri;
    }

    private void writeObject(ObjectOutputStream stream) throws IOException {
        stream.defaultWriteObject();
        stream.writeUTF(uuri);
        stream.writeObject(via);
        stream.writeObject(alist);
    }
}
