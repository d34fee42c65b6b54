// Package certfiles writes the files of sparrow certs: the cluster CA's
// certificate and key, member certificates issued by it with a copy of
// the CA certificate, and gossip keys, each file written with its final
// mode from the start and never replacing another unless asked.
package certfiles
